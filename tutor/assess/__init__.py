"""Verdicts: the judge, the quiz, answer sheets and their grading, history."""
