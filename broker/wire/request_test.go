package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// allKeys returns every api key kmsg knows.
func allKeys() []int16 {
	var keys []int16
	for k := int16(0); k < 200; k++ {
		if kmsg.RequestForKey(k) != nil {
			keys = append(keys, k)
		}
	}
	return keys
}

// TestWireRequestRoundTripAllKeys encodes a default request of every key and version kmsg knows,
// parses it back and checks the header and the re-encoded body.
func TestWireRequestRoundTripAllKeys(t *testing.T) {
	id := "client-1"
	n := 0
	for _, k := range allKeys() {
		proto := kmsg.RequestForKey(k)
		for v := int16(0); v <= proto.MaxVersion(); v++ {
			req := kmsg.RequestForKey(k)
			req.SetVersion(v)
			frame := AppendRequest(nil, req, int32(1000+v), &id)
			if got := int(binary.BigEndian.Uint32(frame)); got != len(frame)-4 {
				t.Fatalf("%s v%d: size prefix %d, frame %d", kmsg.NameForKey(k), v, got, len(frame)-4)
			}
			got, err := ParseRequest(frame[4:])
			if err != nil {
				t.Fatalf("%s v%d: %v", kmsg.NameForKey(k), v, err)
			}
			wantHV := int8(1)
			if req.IsFlexible() {
				wantHV = 2
			}
			if k == controlledShutdownKey && v == 0 {
				wantHV = 0
			}
			if got.Key != k || got.Version != v || got.Correlation != int32(1000+v) || got.HeaderVersion != wantHV {
				t.Fatalf("%s v%d: header %+v", kmsg.NameForKey(k), v, got.Header)
			}
			if wantHV > 0 && got.ClientIDString() != id || wantHV == 0 && got.ClientID != nil {
				t.Fatalf("%s v%d: client id %v", kmsg.NameForKey(k), v, got.ClientID)
			}
			if got.Body.GetVersion() != v || !bytes.Equal(got.Body.AppendTo(nil), req.AppendTo(nil)) {
				t.Fatalf("%s v%d: body does not round-trip", kmsg.NameForKey(k), v)
			}
			n++
		}
	}
	t.Logf("%d key/version pairs round-trip", n)
}

// header builds a request frame (no size prefix) by hand.
func header(key, version int16, corr int32, clientID []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	return append(b, clientID...)
}

func TestWireParseRequestMalformed(t *testing.T) {
	strID := []byte{0, 3, 'a', 'b', 'c'}
	nullID := []byte{0xff, 0xff}
	cases := []struct {
		name     string
		frame    []byte
		want     error
		noHeader bool // the fixed header is not even there
	}{
		{"empty", nil, ErrMalformed, true},
		{"7 bytes", header(3, 1, 7, nil)[:7], ErrMalformed, true},
		{"client id length -2", header(3, 1, 7, []byte{0xff, 0xfe}), ErrMalformed, false},
		{"client id beyond frame", header(3, 1, 7, []byte{0, 50, 'a'}), ErrMalformed, false},
		{"client id missing", header(3, 1, 7, nil), ErrMalformed, false},
		{"unknown key", header(999, 0, 7, strID), ErrUnknownAPIKey, false},
		{"negative key", header(-1, 0, 7, strID), ErrUnknownAPIKey, false},
		{"negative version", header(3, -1, 7, strID), ErrUnsupportedVersion, false},
		{"version above kmsg", header(3, 999, 7, strID), ErrUnsupportedVersion, false},
		// Metadata v1: topics array count INT32_MAX in a 30-byte frame (CVE-2022-34917).
		{"array count int32 max", append(header(3, 1, 7, strID), 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), ErrMalformed, false},
		// Metadata v1: 2 topics claimed, 1 present.
		{"truncated array", append(header(3, 1, 7, strID), 0, 0, 0, 2, 0, 1, 'x'), ErrMalformed, false},
		// Metadata v1: topic string longer than the rest.
		{"string beyond frame", append(header(3, 1, 7, strID), 0, 0, 0, 1, 0x7f, 0xff, 'x'), ErrMalformed, false},
		// Metadata v9 (flexible): header tag count huge.
		{"header tag count", append(header(3, 9, 7, nullID), 0xff, 0xff, 0xff, 0xff, 0x0f), ErrMalformed, false},
		// Metadata v9: one tag claiming 100 bytes.
		{"header tag size", append(header(3, 9, 7, nullID), 1, 0, 100, 1, 2), ErrMalformed, false},
		// Metadata v9: a varint longer than 5 bytes.
		{"header varint overflow", append(header(3, 9, 7, nullID), 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), ErrMalformed, false},
		// Metadata v9: compact array count as a 6-byte varint.
		{"body varint overflow", append(header(3, 9, 7, nullID), 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), ErrMalformed, false},
		// Metadata v9: compact array count 2^31-1 in a small frame.
		{"compact array count", append(header(3, 9, 7, nullID), 0, 0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0), ErrMalformed, false},
		// Produce v3: empty body.
		{"truncated body", header(0, 3, 7, strID), ErrMalformed, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseRequest(tc.frame)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.noHeader {
				if req != nil {
					t.Fatalf("got a request for a frame without a header")
				}
				return
			}
			if req == nil || req.Correlation != 7 {
				t.Fatalf("want the parsed header, got %+v", req)
			}
		})
	}
}

func TestWireParseRequestNullClientID(t *testing.T) {
	// rskafka 0.3 sent a null client_id; Redpanda failed to parse it (redpanda #6570).
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	req.ClientSoftwareName, req.ClientSoftwareVersion = "x", "1"
	got, err := ParseRequest(AppendRequest(nil, req, 5, nil)[4:])
	if err != nil || got.ClientID != nil || got.HeaderVersion != 2 {
		t.Fatalf("err %v header %+v", err, got.Header)
	}
}

func TestWireParseRequestNegativeApiVersions(t *testing.T) {
	req, err := ParseRequest(header(apiVersionsKey, -1, 3, []byte{0xff, 0xff}))
	if !errors.Is(err, ErrUnsupportedVersion) || req.Body != nil {
		t.Fatalf("err %v body %v", err, req.Body)
	}
}

func TestWireParseRequestUnknownKeyKeepsHeader(t *testing.T) {
	req, err := ParseRequest(header(4242, 3, 99, []byte{0, 2, 'i', 'd'}))
	if !errors.Is(err, ErrUnknownAPIKey) {
		t.Fatal(err)
	}
	if req.Key != 4242 || req.Version != 3 || req.Correlation != 99 || req.ClientIDString() != "id" || req.Body != nil {
		t.Fatalf("%+v", req)
	}
	if req.APIName() != "Unknown(4242)" {
		t.Fatal(req.APIName())
	}
}

// TestWireApiVersionsUnsupportedVersion follows KIP-511: an ApiVersions request above our range
// still yields a Body, and the answer is a v0 body with UNSUPPORTED_VERSION behind a v0
// response header that the client (here: our own ParseResponse) can read.
func TestWireApiVersionsUnsupportedVersion(t *testing.T) {
	frame := append(header(apiVersionsKey, 99, 11, []byte{0, 1, 'c'}), 0, 1, 2, 3) // unknown future body
	req, err := ParseRequest(frame)
	if !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("err = %v", err)
	}
	if req.Body == nil || req.Body.Key() != apiVersionsKey || req.Body.GetVersion() != 99 || req.ClientIDString() != "c" {
		t.Fatalf("req %+v body %v", req.Header, req.Body)
	}
	resp := UnsupportedAPIVersionsResponse(0, 3)
	out := AppendResponse(nil, req, resp)
	want := []byte{
		0, 0, 0, 16, // size
		0, 0, 0, 11, // correlation id, no tagged fields (header v0)
		0, 35, // UNSUPPORTED_VERSION
		0, 0, 0, 1, 0, 18, 0, 0, 0, 3, // [ApiVersions 0..3]
	}
	if !bytes.Equal(out, want) {
		t.Fatalf("got % x\nwant % x", out, want)
	}
	// A v3 client reading this falls back to v0.
	creq := kmsg.NewPtrApiVersionsRequest()
	creq.SetVersion(3)
	cresp, err := ParseResponse(out[4:], creq, 11)
	if err != nil {
		t.Fatal(err)
	}
	av := cresp.(*kmsg.ApiVersionsResponse)
	if av.GetVersion() != 0 || av.ErrorCode != 35 || len(av.ApiKeys) != 1 || av.ApiKeys[0].MaxVersion != 3 {
		t.Fatalf("%+v", av)
	}
}

func TestWireResponseHeaderVersions(t *testing.T) {
	cases := []struct {
		key, version int16
		tagByte      bool
	}{
		{apiVersionsKey, 0, false},
		{apiVersionsKey, 3, false}, // flexible body, header still v0 (KIP-511)
		{3, 8, false},
		{3, 9, true},
		{0, 8, false},
		{0, 9, true},
		{1, 12, true},
		{controlledShutdownKey, 0, false},
	}
	for _, tc := range cases {
		body := kmsg.RequestForKey(tc.key)
		body.SetVersion(tc.version)
		req, err := ParseRequest(AppendRequest(nil, body, 77, nil)[4:])
		if err != nil {
			t.Fatalf("%d v%d: %v", tc.key, tc.version, err)
		}
		resp := req.Body.ResponseKind()
		out := AppendResponse(nil, req, resp)
		encoded := resp.AppendTo(nil)
		hdr := 4
		if tc.tagByte {
			hdr = 5
		}
		if len(out) != 4+hdr+len(encoded) || binary.BigEndian.Uint32(out[4:]) != 77 || !bytes.Equal(out[4+hdr:], encoded) {
			t.Fatalf("%s v%d: bad frame % x", kmsg.NameForKey(tc.key), tc.version, out)
		}
		if tc.tagByte && out[8] != 0 {
			t.Fatalf("%s v%d: tag byte %d", kmsg.NameForKey(tc.key), tc.version, out[8])
		}
		back, err := ParseResponse(out[4:], body, 77)
		if err != nil || back.GetVersion() != tc.version {
			t.Fatalf("%s v%d: parse back: %v", kmsg.NameForKey(tc.key), tc.version, err)
		}
	}
}

// TestWireAppendResponseForcesRequestVersion: a handler that builds a response without setting
// its version still answers at the request's version.
func TestWireAppendResponseForcesRequestVersion(t *testing.T) {
	body := kmsg.NewPtrMetadataRequest()
	body.SetVersion(7)
	req, err := ParseRequest(AppendRequest(nil, body, 1, nil)[4:])
	if err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrMetadataResponse() // version 0
	out := AppendResponse(nil, req, resp)
	if resp.GetVersion() != 7 {
		t.Fatalf("version %d", resp.GetVersion())
	}
	if _, err := ParseResponse(out[4:], body, 1); err != nil {
		t.Fatal(err)
	}
}

func TestWireParseResponseErrors(t *testing.T) {
	body := kmsg.NewPtrMetadataRequest()
	body.SetVersion(9)
	if _, err := ParseResponse([]byte{0, 0}, body, 1); !errors.Is(err, ErrMalformed) {
		t.Fatalf("short: %v", err)
	}
	if _, err := ParseResponse([]byte{0, 0, 0, 2, 0}, body, 1); !errors.Is(err, ErrCorrelation) {
		t.Fatalf("corr: %v", err)
	}
	if _, err := ParseResponse([]byte{0, 0, 0, 1, 0, 0, 0}, body, 1); !errors.Is(err, ErrMalformed) {
		t.Fatalf("truncated body: %v", err)
	}
}
