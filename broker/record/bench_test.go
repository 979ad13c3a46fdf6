package record

import "testing"

// benchBatch returns an uncompressed batch of about 16 KiB made of records
// with 100-byte values.
func benchBatch(b *testing.B, codec Codec) (Batch, []Record) {
	b.Helper()
	recs := testRecords(140, 100)
	batch, err := Build(NewBuildHeader(0, 1600000000000), recs, codec)
	if err != nil {
		b.Fatal(err)
	}
	return batch, recs
}

// BenchmarkRecordValidate measures the shallow check done on every produce
// and replica fetch: framing plus CRC-32C of a ~16 KiB batch.
func BenchmarkRecordValidate(b *testing.B) {
	batch, _ := benchBatch(b, CodecNone)
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		if err := batch.Validate(Limits{MaxBatchBytes: 1 << 20}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordValidateDeep adds the in-place walk over every record
// (decompressing first for the compressed variants).
func BenchmarkRecordValidateDeep(b *testing.B) {
	for _, codec := range []Codec{CodecNone, CodecLZ4, CodecZstd} {
		b.Run(codec.String(), func(b *testing.B) {
			batch, _ := benchBatch(b, codec)
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if err := batch.Validate(Limits{Deep: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecordBuild measures encoding 140 records (~16 KiB) into a batch.
func BenchmarkRecordBuild(b *testing.B) {
	for _, codec := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		b.Run(codec.String(), func(b *testing.B) {
			batch, recs := benchBatch(b, CodecNone)
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(NewBuildHeader(0, 1600000000000), recs, codec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecordNextBatch measures splitting a fetch-sized stream.
func BenchmarkRecordNextBatch(b *testing.B) {
	batch, _ := benchBatch(b, CodecNone)
	var stream []byte
	for range 64 {
		stream = append(stream, batch...)
	}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		for rest := stream; len(rest) > 0; {
			_, next, err := NextBatch(rest)
			if err != nil {
				b.Fatal(err)
			}
			rest = next
		}
	}
}
