"""Structured records over the daemon's opaque "bytes" layout.

A daemon started with ``--record-layout bytes --record-bytes B`` stores records of exactly B bytes
and never looks inside them. A numpy structured dtype gives those bytes a meaning on the Python
side: the producer packs with it and the learner unpacks with it, so both must use the same dtype
(same fields, shapes, dtypes and byte order; little-endian by default here). Its itemsize must be
B: ``check_dtype`` compares it with the daemon's ``record_bytes`` (``ReplayClient.record_bytes``
asks ``status`` once).

  layout = transition_dtype(obs_shape=(4,), action_dtype="<i8")
  az-replay --record-layout bytes --record-bytes {layout.itemsize} ...
  client.insert(pack({"obs": obs, "action": a, "reward": r, "discount": d, "next_obs": o2},
                     layout))
  batch = client.sample(256, beta)
  transitions = batch.unpack(layout)          # transitions["obs"], ["reward"], ...
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np


def transition_dtype(obs_shape: tuple = (), obs_dtype: Any = "<f4", action_shape: tuple = (),
                     action_dtype: Any = "<i8", reward_dtype: Any = "<f4",
                     record_bytes: Optional[int] = None) -> np.dtype:
    """A one-step or n-step transition: ``obs``, ``action``, ``reward`` (the n-step return),
    ``discount`` (what multiplies the bootstrap value: gamma^k after k steps, 0 when the episode
    terminated) and ``next_obs`` (the observation the bootstrap value is taken at).

    Fields are packed back to back in that order, with no alignment padding: the layout is the
    bytes, the same on every machine. With `record_bytes` the dtype is padded at the end to that
    size (so a daemon with larger records can still be used); ValueError when the fields do not
    fit.
    """
    fields = [("obs", np.dtype(obs_dtype), tuple(obs_shape)),
              ("action", np.dtype(action_dtype), tuple(action_shape)),
              ("reward", np.dtype(reward_dtype)),
              ("discount", np.dtype(reward_dtype)),
              ("next_obs", np.dtype(obs_dtype), tuple(obs_shape))]
    dtype = np.dtype(fields, align=False)
    if record_bytes is None:
        return dtype
    if dtype.itemsize > record_bytes:
        raise ValueError(f"a transition needs {dtype.itemsize} bytes, more than the "
                         f"{record_bytes}-byte records")
    return np.dtype({"names": dtype.names,
                     "formats": [dtype.fields[name][0] for name in dtype.names],
                     "offsets": [dtype.fields[name][1] for name in dtype.names],
                     "itemsize": record_bytes})


def check_dtype(dtype: np.dtype, record_bytes: int) -> None:
    """Raises ValueError unless `dtype` is a structured dtype of plain bytes (no Python objects)
    whose itemsize is the daemon's `record_bytes`."""
    dtype = np.dtype(dtype)
    if dtype.names is None or dtype.hasobject:
        raise ValueError(f"a record layout is a structured dtype without object fields, got "
                         f"{dtype}")
    if dtype.itemsize != record_bytes:
        raise ValueError(f"the record dtype is {dtype.itemsize} bytes, the daemon stores "
                         f"{record_bytes}-byte records (start it with --record-bytes "
                         f"{dtype.itemsize}, or pad the dtype with record_bytes=)")


def pack(records: Any, dtype: np.dtype) -> np.ndarray:
    """Records as ``n x itemsize`` uint8 rows, ready for ``ReplayClient.insert``.

    `records`: a structured array (fields copied by name into `dtype`; fields it lacks stay zero)
    or a mapping of field name to an array whose first axis is the record. ValueError for a field
    `dtype` does not have, or fields of different lengths.
    """
    dtype = np.dtype(dtype)
    check_dtype(dtype, dtype.itemsize)
    if isinstance(records, Mapping):
        columns = {name: np.asarray(value) for name, value in records.items()}
    else:
        array = np.asarray(records)
        if array.dtype.names is None:
            raise ValueError("pack takes a structured array or a mapping of fields")
        if array.dtype == dtype:  # already laid out: no field-by-field copy
            rows = np.ascontiguousarray(array).reshape(-1)
            return rows.view(np.uint8).reshape(-1, dtype.itemsize)
        columns = {name: array[name] for name in array.dtype.names}
    unknown = set(columns) - set(dtype.names)
    if unknown:
        raise ValueError(f"fields {sorted(unknown)} are not in the record layout {dtype.names}")
    # Scalars are broadcast over the records (a constant discount, say).
    lengths = {value.shape[0] for value in columns.values() if value.ndim}
    if len(lengths) > 1:
        raise ValueError(f"fields hold different numbers of records: {sorted(lengths)}")
    out = np.zeros(lengths.pop() if lengths else 1, dtype=dtype)
    for name, value in columns.items():
        out[name] = value
    return out.view(np.uint8).reshape(-1, dtype.itemsize)


def unpack(raw: Any, dtype: np.dtype) -> np.ndarray:
    """Records (``n x itemsize`` uint8, or bytes) as an owned structured array of `dtype`.
    ValueError when the bytes are not a whole number of records of that size."""
    dtype = np.dtype(dtype)
    array = np.frombuffer(raw, dtype=np.uint8) if isinstance(raw, (bytes, bytearray)) else \
        np.asarray(raw)
    if array.dtype != np.uint8 or (array.ndim == 2 and array.shape[1] != dtype.itemsize) \
            or array.ndim > 2 or array.size % dtype.itemsize:
        raise ValueError(f"{array.dtype} {array.shape} is not a whole number of "
                         f"{dtype.itemsize}-byte records")
    # A copy: aligned, writable and independent of the received frame.
    return np.ascontiguousarray(array).reshape(-1).view(dtype).copy()
