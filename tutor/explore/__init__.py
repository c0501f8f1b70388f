"""`attn-tutor explore`: change a number of a lesson and watch attention change."""
