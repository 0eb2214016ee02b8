"""n-step transitions for off-policy learners (DQN, SAC), and priorities from TD errors.

For a step t of an episode with rewards r_t, r_{t+1}, ... the writer stores

  reward   = sum_{k<m} gamma^k r_{t+k}          m = min(n, steps left in the episode)
  discount = gamma^m, or 0 when the episode terminated within those m steps
  next_obs = obs_{t+m}                          (the last observation when the episode ended)

so the learner's target is ``reward + discount * max_a Q(next_obs, a)`` whatever happened: a
terminal step needs no flag, and an episode cut short by a time limit (truncated, not terminated)
still bootstraps from its last observation.
"""

from __future__ import annotations

import collections
from typing import Any, Optional

import numpy as np

from .records import check_dtype

_FIELDS = ("obs", "action", "reward", "discount", "next_obs")


def priorities_from_td(td_errors: Any) -> np.ndarray:
    """The loss to send in ``update_priorities`` for each sampled transition: |TD error|, as
    float64. The daemon turns it into the priority itself, p = (loss + epsilon)^alpha with its
    configured alpha and epsilon (docs/replay.md), so do not raise it to alpha here. NaN or
    infinite errors are passed on: the daemon rejects and counts them (``rejected``) and the record
    keeps its priority."""
    return np.abs(np.asarray(td_errors, dtype=np.float64)).ravel()


class NStepWriter:
    """Turns one environment's steps into n-step transitions and inserts them in batches.

    `client` is a ReplayClient (anything with ``record_bytes`` and ``insert(records)``); `dtype`
    a structured dtype with the fields obs, action, reward, discount and next_obs
    (records.transition_dtype makes one), whose itemsize must be the daemon's record size
    (ValueError otherwise, at construction). One writer per environment: steps of different
    episodes running at once must not interleave in one writer.

    ``add`` never blocks except when a batch of `batch_size` transitions is full; then it inserts
    it (``flush``), blocking up to the client's timeout and raising its ReplayError. A flush that
    raised keeps its transitions for the next flush: after DEADLINE_EXCEEDED or UNAVAILABLE they
    may then be stored twice, which replay tolerates better than losing them.
    """

    def __init__(self, client: Any, n: int, gamma: float, dtype: np.dtype, *,
                 batch_size: int = 256):
        if n < 1 or not 0 <= gamma <= 1 or batch_size < 1:
            raise ValueError(f"need n >= 1, gamma in [0, 1], batch_size >= 1; got {n}, {gamma}, "
                             f"{batch_size}")
        dtype = np.dtype(dtype)
        missing = [name for name in _FIELDS if name not in (dtype.names or ())]
        if missing:
            raise ValueError(f"the record dtype lacks the fields {missing}")
        check_dtype(dtype, client.record_bytes)
        self.client, self.n, self.gamma, self.dtype = client, n, float(gamma), dtype
        self.batch_size = batch_size
        self.written = 0  # transitions inserted so far
        self._steps: collections.deque = collections.deque()  # (obs, action, reward), oldest first
        self._pending: list = []  # finished transitions not inserted yet

    def add(self, obs: Any, action: Any, reward: float, next_obs: Any, terminated: bool = False,
            truncated: bool = False) -> Optional[np.ndarray]:
        """Records one step: the agent saw `obs`, took `action`, got `reward` and then saw
        `next_obs`; `terminated` (a terminal state: no bootstrap) or `truncated` (a time limit:
        bootstrap from `next_obs`) ends the episode and writes its last transitions with their
        shorter horizons. Returns the generations when this step filled a batch, else None."""
        # Copies: environments often reuse their observation buffers.
        self._steps.append((np.array(obs), np.array(action), float(reward)))
        if terminated or truncated:
            while self._steps:
                self._finish_oldest(next_obs, terminated)
        elif len(self._steps) == self.n:
            self._finish_oldest(next_obs, terminated=False)
        if len(self._pending) >= self.batch_size:
            return self.flush()
        return None

    def _finish_oldest(self, next_obs: Any, terminated: bool) -> None:
        rewards = [reward for _, _, reward in self._steps]
        horizon = len(rewards)
        ret = sum(self.gamma ** k * r for k, r in enumerate(rewards))
        discount = 0.0 if terminated else self.gamma ** horizon
        obs, action, _ = self._steps.popleft()
        self._pending.append((obs, action, ret, discount, np.array(next_obs)))

    def flush(self) -> Optional[np.ndarray]:
        """Inserts the finished transitions now (steps of an unfinished episode wait for their n
        rewards); returns their generations, or None when there were none."""
        if not self._pending:
            return None
        records = np.zeros(len(self._pending), dtype=self.dtype)
        for name, column in zip(_FIELDS, zip(*self._pending)):
            records[name] = np.stack(column)
        generations = self.client.insert(records)
        self.written += len(self._pending)
        self._pending.clear()
        return generations

    def pending(self) -> int:
        """Finished transitions waiting for the next flush."""
        return len(self._pending)

    def close(self) -> None:
        """Flushes. Steps of an episode that has not ended are dropped (end it with truncated=True
        to keep them)."""
        self.flush()
        self._steps.clear()

    def __enter__(self) -> "NStepWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
