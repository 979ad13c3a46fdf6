package record

import "hash/crc32"

// castagnoli is the CRC-32C table used by record batch v2. hash/crc32 uses
// the SSE4.2 / ARMv8 CRC instructions for this polynomial when available.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32c returns the CRC-32C (Castagnoli) of p.
func crc32c(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }

// crc32IEEE returns the CRC-32 (IEEE) of p, the checksum of messages v0/v1.
func crc32IEEE(p []byte) uint32 { return crc32.ChecksumIEEE(p) }
