// Package pwencoder encrypts and decrypts dynamic broker password configs
// exactly as Kafka 2.8's kafka.utils.PasswordEncoder does, so the values
// kafka-configs.sh --entity-type brokers leaves in /config/brokers/<id>
// are readable by Samsa and Kafka alike.
//
// # Stored format
//
// One string of comma-separated key:value pairs, in any order (Kafka writes
// a Scala HashMap; the reader splits on "," and each pair on its last ":"):
//
//	encryptedPassword  base64 (standard, padded) of the cipher text
//	passwordLength     length of the clear password in UTF-16 code units
//	                   (Java's String.length), checked after decryption
//	salt               base64 of 256 random bytes
//	iv                 base64 of the cipher's IV (CBC: 16 bytes; GCM: 12)
//	authenticationTagLength  GCM only: the tag length in bits
//	keyFactoryAlgorithm  PBKDF2WithHmacSHA512 (default), ...SHA256, ...SHA1
//	cipherAlgorithm    AES/CBC/PKCS5Padding (default) or AES/GCM/NoPadding
//	keyLength          key length in bits: 128, 192 or 256
//	iterations         PBKDF2 iteration count
//
// The AES key is PBKDF2(HMAC-<hash>, UTF-8 bytes of password.encoder.secret,
// salt, iterations, keyLength/8), as Java's PBEKeySpec/SecretKeyFactory
// derive it; the clear text is the password's UTF-8 bytes.
//
// # Invariants
//
// Decode reads ZooKeeper, so it never trusts the string: unknown
// algorithms, key lengths other than 128/192/256, iteration counts outside
// [1, MaxIterations], oversized salts and bad padding are errors, never a
// panic or an unbounded computation. It is fuzzed (FuzzDecode).
//
// # Concurrency
//
// An Encoder is immutable and safe for concurrent use.
package pwencoder
