"""For instructors: new lessons, check (lint), the JSON Schema."""
