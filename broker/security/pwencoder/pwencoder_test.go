package pwencoder

import (
	"strconv"
	"strings"
	"testing"
)

// salt0to255 is base64 of the bytes 0..255, the salt the golden strings use.
const salt0to255 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w=="

// goldens were produced by a Java 17 program doing what Kafka 2.8's
// PasswordEncoder.encode does (SecretKeyFactory + PBEKeySpec with secret
// "encoder-secret", Cipher.getInstance(cipherAlgorithm)), with the salt
// pinned to 0..255 and the IV to a0 a1 a2 ...
var goldens = []struct {
	password, keyFactory, cipher string
	keyLength, iterations        int
	stored                       string
}{
	{"storepw", "PBKDF2WithHmacSHA512", "AES/CBC/PKCS5Padding", 128, 4096,
		"salt:" + salt0to255 + ",iterations:4096,keyFactoryAlgorithm:PBKDF2WithHmacSHA512,encryptedPassword:lbg2Mf/siYCjQ4GH41o7MQ==,cipherAlgorithm:AES/CBC/PKCS5Padding,passwordLength:7,keyLength:128,iv:oKGio6SlpqeoqaqrrK2urw=="},
	{"pässwörd-€😀", "PBKDF2WithHmacSHA256", "AES/GCM/NoPadding", 256, 1024,
		"salt:" + salt0to255 + ",iterations:1024,keyFactoryAlgorithm:PBKDF2WithHmacSHA256,encryptedPassword:47I8fNP4Ybjq191wZ+h3DU3WmjeW9xu9sVjErRIKhBOCCQ==,cipherAlgorithm:AES/GCM/NoPadding,passwordLength:12,keyLength:256,iv:oKGio6Slpqeoqaqr,authenticationTagLength:128"},
	{"sixteen-bytes-pw", "PBKDF2WithHmacSHA1", "AES/CBC/PKCS5Padding", 192, 2048,
		"salt:" + salt0to255 + ",iterations:2048,keyFactoryAlgorithm:PBKDF2WithHmacSHA1,encryptedPassword:BJv4WWX0ytJfquSAL+x2DDgcXYjcKQoMZH9oCj4KBVk=,cipherAlgorithm:AES/CBC/PKCS5Padding,passwordLength:16,keyLength:192,iv:oKGio6SlpqeoqaqrrK2urw=="},
}

func fields(s string) map[string]string { return parseCSVMap(s) }

func TestDecodeKafkaGolden(t *testing.T) {
	// Decoding needs only the secret: the algorithms come from the string.
	e, err := New("encoder-secret", "", "", DefaultKeyLength, DefaultIterations)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range goldens {
		got, err := e.Decode(g.stored)
		if err != nil || got != g.password {
			t.Errorf("%s: Decode = %q, %v; want %q", g.cipher, got, err, g.password)
		}
	}
}

func TestEncodeMatchesKafkaGolden(t *testing.T) {
	salt := make([]byte, 256)
	for i := range salt {
		salt[i] = byte(i)
	}
	for _, g := range goldens {
		e, err := New("encoder-secret", g.keyFactory, g.cipher, g.keyLength, g.iterations)
		if err != nil {
			t.Fatal(err)
		}
		iv := make([]byte, ivLen(g.cipher))
		for i := range iv {
			iv[i] = byte(0xa0 + i)
		}
		got, err := e.encode(g.password, salt, iv)
		if err != nil {
			t.Fatal(err)
		}
		gf, wf := fields(got), fields(g.stored)
		if len(gf) != len(wf) {
			t.Errorf("%s: fields %v, want %v", g.cipher, gf, wf)
		}
		for k, v := range wf {
			if gf[k] != v {
				t.Errorf("%s: field %s = %q, want %q", g.cipher, k, gf[k], v)
			}
		}
	}
}

func TestRoundTripAndWrongSecret(t *testing.T) {
	for _, alg := range []string{"AES/CBC/PKCS5Padding", "AES/GCM/NoPadding"} {
		e, err := New("s3cret", "", alg, 128, 1024)
		if err != nil {
			t.Fatal(err)
		}
		for _, pw := range []string{"", "a", "exactly16bytes!!", strings.Repeat("long ", 100), "ünïcødé"} {
			stored, err := e.Encode(pw)
			if err != nil {
				t.Fatal(err)
			}
			if len(pw) >= 8 && strings.Contains(stored, pw) {
				t.Fatalf("stored string %q contains the password", stored)
			}
			got, err := e.Decode(stored)
			if err != nil || got != pw {
				t.Fatalf("%s: round trip of %q = %q, %v", alg, pw, got, err)
			}
			again, _ := e.Encode(pw)
			if again == stored {
				t.Fatalf("two encodings of %q are equal: salt and IV must be fresh", pw)
			}
		}
		other, _ := New("other", "", alg, 128, 1024)
		stored, _ := e.Encode("a-password-of-some-length")
		if got, err := other.Decode(stored); err == nil {
			t.Fatalf("%s: a wrong secret decoded %q", alg, got)
		}
	}
}

func TestNewRejects(t *testing.T) {
	if _, err := New("", "", "", 128, 4096); err != ErrSecretNotConfigured {
		t.Fatalf("empty secret: %v", err)
	}
	for _, c := range []struct {
		kf, cipher  string
		keyLen, its int
	}{{"MD5", "", 128, 4096}, {"", "DES/CBC/PKCS5Padding", 128, 4096}, {"", "", 100, 4096}, {"", "", 128, 0}, {"", "", 128, MaxIterations + 1}} {
		if _, err := New("s", c.kf, c.cipher, c.keyLen, c.its); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	e, _ := New("encoder-secret", "", "", 128, 4096)
	g := goldens[0].stored
	for name, s := range map[string]string{
		"empty":        "",
		"clear text":   "storepw",
		"no iv":        strings.Replace(g, ",iv:oKGio6SlpqeoqaqrrK2urw==", "", 1),
		"short iv":     strings.Replace(g, "iv:oKGio6SlpqeoqaqrrK2urw==", "iv:oKGi", 1),
		"bad length":   strings.Replace(g, "passwordLength:7", "passwordLength:8", 1),
		"huge its":     strings.Replace(g, "iterations:4096", "iterations:999999999", 1),
		"bad base64":   strings.Replace(g, "encryptedPassword:lbg2", "encryptedPassword:*bg2", 1),
		"cut cipher":   strings.Replace(g, "lbg2Mf/siYCjQ4GH41o7MQ==", "lbg2Mf/siYCjQ4GH", 1),
		"unknown algo": strings.Replace(g, "AES/CBC/PKCS5Padding", "AES/ECB/NoPadding", 1),
	} {
		if got, err := e.Decode(s); err == nil {
			t.Errorf("%s: decoded %q", name, got)
		}
	}
}

// FuzzDecode: Decode reads ZooKeeper; whatever the string, it returns an
// error or a password, never panics.
func FuzzDecode(f *testing.F) {
	for _, g := range goldens {
		f.Add(g.stored)
	}
	f.Add("iv:,salt:,keyLength:128")
	e, _ := New("encoder-secret", "", "", 128, 4096)
	f.Fuzz(func(t *testing.T, s string) {
		pw, err := e.Decode(s)
		if err == nil && javaLength(pw) != atoiField(s, fieldLength) {
			t.Fatalf("decoded %q against its passwordLength", pw)
		}
	})
}

func atoiField(s, k string) int {
	n, _ := strconv.Atoi(parseCSVMap(s)[k])
	return n
}
