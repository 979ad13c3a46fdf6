package wire

import "errors"

// Errors returned by ReadFrame and ParseRequest. They are sentinels: test them with errors.Is,
// because the returned errors wrap them with detail (sizes, offsets).
var (
	// ErrFrameTooLarge: the 4-byte size prefix exceeds the limit (socket.request.max.bytes).
	// Nothing beyond the 4-byte prefix has been read or allocated. The connection must close.
	ErrFrameTooLarge = errors.New("wire: frame larger than the maximum request size")
	// ErrBadFrame: the size prefix is negative, or too small to hold a request or response header.
	// The connection must close.
	ErrBadFrame = errors.New("wire: bad frame size")
	// ErrMalformed: the header or the body does not decode (truncated, bad varint, string or
	// array length beyond the remaining bytes). The connection must close.
	ErrMalformed = errors.New("wire: malformed message")
	// ErrUnknownAPIKey: the request's api_key is not a Kafka API that kmsg knows. ParseRequest
	// still returns the parsed fixed header (key, version, correlation id) for logging.
	ErrUnknownAPIKey = errors.New("wire: unknown api key")
	// ErrUnsupportedVersion: the api_version is negative or above the highest version kmsg can
	// decode for that key. ParseRequest returns the header; for ApiVersions it also returns an
	// empty body so the caller can answer UNSUPPORTED_VERSION (KIP-511).
	ErrUnsupportedVersion = errors.New("wire: unsupported api version")
	// ErrCorrelation: a response carries a correlation id other than the one expected.
	ErrCorrelation = errors.New("wire: correlation id mismatch")
)
