"""The process-wide tuning budget and the per-kernel outcome log.

The library keeps no state between run() calls, so the accounting of SASSTUNE_TOTAL_BUDGET
(``enable(total_budget=...)``) lives here: each kernel tuned at its first launch is granted
min(SASSTUNE_BUDGET, what is left) whole seconds, passed to run() as its "budget"; once less than
a second is left, the remaining kernels run stock and stay untuned (pending: a later process with
budget left tunes them; nothing is cached as negative).  Kernels tuned at the same moment on
several threads each see what was left when they started, so the total may be overrun by at most
one grant per extra thread.

One line per kernel is logged at info (tuned and gained / kept stock / skipped: budget spent /
not tuned, with seconds), and a summary at exit (atexit) when anything was tuned or skipped.
"""
import atexit
import threading

from ._settings import log

OUTCOMES = ("gained", "kept-stock", "skipped", "not-tuned", "cached")


class Budget:
    """Accounting for one process (one module-level instance, ``BUDGET``)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with getattr(self, "lock", threading.Lock()):
            self.spent = 0.0
            self.counts = dict.fromkeys(OUTCOMES, 0)
            self.kernels = []  # (kernel, outcome, seconds)

    def grant(self, per_kernel, total):
        """Whole seconds this kernel may tune (per_kernel capped by what is left of total), or None
        when the total budget is spent (then the kernel is skipped)."""
        with self.lock:
            if total is None:
                return per_kernel
            left = int(total - self.spent)
            if left < 1:
                return None
            return min(per_kernel, left)

    def record(self, kernel, outcome, seconds=0.0, detail=""):
        """Count one kernel's outcome (OUTCOMES) and log its line."""
        with self.lock:
            self.spent += seconds if outcome in ("gained", "kept-stock", "not-tuned") else 0.0
            self.counts[outcome] = self.counts.get(outcome, 0) + 1
            self.kernels.append((kernel, outcome, seconds))
            spent = self.spent
        words = {"gained": "tuned, gained", "kept-stock": "tuned, kept stock", "skipped": "skipped: budget spent",
                 "not-tuned": "not tuned", "cached": "cached"}
        log("info", "%s: %s (%.1f s; %.1f s of tuning in this process)%s", kernel, words.get(outcome, outcome),
            seconds, spent, ": " + detail if detail else "")

    def summary(self):
        """One line: kernels tuned, gained, kept stock, skipped, time spent."""
        with self.lock:
            c = dict(self.counts)
            spent = self.spent
        tuned = c["gained"] + c["kept-stock"]
        return ("%d kernel%s tuned (%d gained, %d kept stock) in %.1f s; %d skipped (budget spent); "
                "%d not tuned; %d served from the cache at launch" %
                (tuned, "" if tuned == 1 else "s", c["gained"], c["kept-stock"], spent, c["skipped"],
                 c["not-tuned"], c["cached"]))

    def at_exit(self):
        with self.lock:
            busy = any(self.counts[k] for k in ("gained", "kept-stock", "skipped", "not-tuned"))
        if busy:  # a warning when kernels were left untuned for lack of budget
            log("warn" if self.counts["skipped"] else "info", "summary: %s", self.summary())


BUDGET = Budget()
_registered = []


def register_exit():
    """Log the summary at exit (once per process)."""
    if not _registered:
        _registered.append(True)
        atexit.register(BUDGET.at_exit)
