"""az_replay: a Python client of the replay daemon az-replay, for off-policy learners.

  ReplayClient       insert, sample, update_priorities, read, status over the control socket
                     (ipc:// or tcp:// with CURVE), errors as ReplayError(code, message)
  records            structured numpy dtypes over the daemon's opaque "bytes" records
  NStepWriter        n-step transitions with discounted returns, inserted in batches
  priorities_from_td the loss to send for a TD error (the daemon applies alpha and epsilon)

docs/replay.md, "From Python", has a worked DQN-style loop. Needs pyzmq and numpy (Debian:
python3-zmq, python3-numpy; scripts/packages.txt).
"""

from .client import (DEFAULT_SAMPLE_TIMEOUT_MS, PRIORITY_UPDATE_DTYPE, SAMPLED_SLOT_DTYPE,
                     CurveKeys, ReadResult, ReplayClient, SampledBatch, default_control_endpoint,
                     discover_endpoint)
from .errors import ReplayError
from .nstep import NStepWriter, priorities_from_td
from .records import check_dtype, pack, transition_dtype, unpack

__all__ = [
    "CurveKeys", "DEFAULT_SAMPLE_TIMEOUT_MS", "NStepWriter", "PRIORITY_UPDATE_DTYPE", "ReadResult",
    "ReplayClient", "ReplayError", "SAMPLED_SLOT_DTYPE", "SampledBatch", "check_dtype",
    "default_control_endpoint", "discover_endpoint", "pack", "priorities_from_td",
    "transition_dtype", "unpack",
]
