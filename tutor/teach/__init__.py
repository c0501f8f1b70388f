"""What a student reads: the walk, explain, the softmax warm-up, the lesson list."""
