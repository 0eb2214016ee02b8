"""The one exception of the package: an error the daemon answered, or one of the transport.

Codes are the names of the C++ side's ``az::StatusCode`` (core/base/status.h), so a Python user
sees the same words as ``azctl`` prints:

  from the daemon     INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, DEADLINE_EXCEEDED (the rate
                      limiter held a sample past its timeout), CANCELLED (shutdown),
                      RESOURCE_EXHAUSTED, INTERNAL
  from this client    DEADLINE_EXCEEDED (no attempt got a reply), UNAVAILABLE (the connection
                      dropped while waiting: the request may or may not have been carried out),
                      PERMISSION_DENIED (CURVE: the server refused this client's key, or no
                      handshake completed), DATA_LOSS (a reply that is not a protocol reply),
                      RESOURCE_EXHAUSTED (a request over the size limit, refused before sending),
                      FAILED_PRECONDITION / NOT_FOUND / DATA_LOSS for the CURVE key files
"""


class ReplayError(Exception):
    """An error with the daemon's (or the transport's) code and message."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
