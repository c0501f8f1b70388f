"""The child process of ``attn-tutor check-code``: import the student's file, call their function.

Started as ``python -c BOOT FILE FUNCTION FD`` in a session of its own. The calls' inputs arrive
on stdin as JSON ({nonce, limit, calls: [{X, W_Q, W_K, W_V, mask}]}); the answer goes on file
descriptor FD, a pipe of its own, as one record framed with the parent's nonce and its length:
the steps each call returned (a step larger than ``limit`` values as its shape alone), or the
problem. Whatever the student's code prints, on fd 1 or 2, is only ever shown as their output.
This is the student's own code on their own machine, run as pytest would run it; the parent
gives it a time limit, a cap on what it prints, and ends its whole process group.
"""

from __future__ import annotations

import contextlib
import os
import sys
from json import dumps, loads  # bound before the student's code runs: a patched json is theirs


def main() -> None:
    path, name, fd = sys.argv[-3], sys.argv[-2], int(sys.argv[-1])
    os.set_inheritable(fd, False)  # a program the student starts is not handed the answer's pipe
    job = loads(sys.stdin.read())
    nonce, limit = str(job["nonce"]), int(job["limit"])
    write, close = os.write, os.close  # the student's code may patch os, as it may patch json
    try:
        doc = _answer(path, name, job["calls"], limit)
    except BaseException:  # the tutor's own code failed (the student patched numpy?): no answer
        doc = {"problem": "your code's process could not send its answer"}
    for stream in (sys.stdout, sys.stderr):  # the student's prints, before the answer
        with contextlib.suppress(BaseException):
            stream.flush()
    try:
        body = dumps(doc).encode()
    except BaseException:
        body = b'{"problem": "your code\'s process could not send its answer"}'
    record = f"ATTN-TUTOR {nonce} {len(body)}\n".encode() + body
    try:
        while record:
            record = record[write(fd, record) :]
        close(fd)
    except OSError:
        pass  # the student closed it: the parent says the code ended before answering


def _answer(path: str, name: str, calls: list[dict[str, object]], limit: int) -> dict[str, object]:
    import runpy
    import traceback

    import numpy as np

    from tutor.assess.codecheck import describe, steps_of
    from tutor.core.errors import TutorError
    from tutor.core.spec import WEIGHT_KEYS

    try:
        space = runpy.run_path(path, run_name="student")
        fn = space.get(name)
        if not callable(fn):
            found = sorted(k for k, v in space.items() if callable(v) and not k.startswith("_"))
            listed = ", ".join(found) if found else "none"
            raise TutorError(f"{path} has no function {name}() (functions found: {listed})")
        results = []
        for call in calls:
            mask = None if call["mask"] is None else np.array(call["mask"], dtype=bool)
            args = [np.array(call[k], dtype=np.float64) for k in ("X", *WEIGHT_KEYS)]
            extra = {  # scale, b_Q, b_K, b_V (issue 41)
                k: np.array(v, dtype=np.float64) if isinstance(v, list) else float(v)
                for k, v in call.get("extra", {}).items()
            }
            steps = steps_of(fn(*args, mask=mask, **extra))
            results.append(
                {
                    k: {"shape": list(v.shape), "values": v.tolist() if v.size <= limit else None}
                    for k, v in steps.items()
                }
            )
        return {"results": results}
    except TutorError as err:
        return {"problem": describe(err, bare=True)}
    except BaseException as err:  # the student's code, KeyboardInterrupt and SystemExit too
        try:
            mine = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == path]
            at = f" (line {mine[-1].lineno} of {path})" if mine else ""
        except BaseException:
            at = ""
        return {"problem": f"your code raised {describe(err)}{at}"}


if __name__ == "__main__":
    main()
