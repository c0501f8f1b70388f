"""The exact core: numbers, lesson files, the engine. Imports nothing else of tutor."""
