"""The child process of ``attn-tutor check-code``: import the student's file, call their function.

Run as ``python -m tutor.assess.run_student FILE FUNCTION``; the calls' inputs arrive on stdin as
JSON (a list of {X, W_Q, W_K, W_V, mask}), and one JSON line goes to stdout: the steps each call
returned, or the problem. Whatever the student's code prints goes to stderr, so it cannot be
mistaken for the answer. This is the student's own code on their own machine, run as pytest
would run it; the parent gives it a time limit.
"""

from __future__ import annotations

import json
import runpy
import sys
import traceback


def main() -> None:
    path, name = sys.argv[-2], sys.argv[-1]
    calls = json.loads(sys.stdin.read())
    out = sys.stdout
    sys.stdout = sys.stderr  # the student's prints
    try:
        import numpy as np

        from tutor.assess.codecheck import steps_of
        from tutor.core.errors import TutorError

        space = runpy.run_path(path, run_name="student")
        fn = space.get(name)
        if not callable(fn):
            found = sorted(k for k, v in space.items() if callable(v) and not k.startswith("_"))
            listed = ", ".join(found) if found else "none"
            raise TutorError(f"{path} has no function {name}() (functions found: {listed})")
        results = []
        for call in calls:
            mask = None if call["mask"] is None else np.array(call["mask"], dtype=bool)
            args = [np.array(call[k], dtype=np.float64) for k in ("X", "W_Q", "W_K", "W_V")]
            steps = steps_of(fn(*args, mask=mask))
            results.append({k: v.tolist() for k, v in steps.items()})
        doc: dict[str, object] = {"results": results}
    except TutorError as err:
        doc = {"problem": str(err)}
    except BaseException as err:  # the student's code: report it, with their traceback
        if isinstance(err, KeyboardInterrupt):
            raise
        tb = traceback.extract_tb(err.__traceback__)
        mine = [f for f in tb if f.filename == path]
        at = f" (line {mine[-1].lineno} of {path})" if mine else ""
        doc = {"problem": f"your code raised {type(err).__name__}: {err}{at}"}
    out.write(json.dumps(doc) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
