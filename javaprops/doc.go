// Package javaprops reads and writes the text format of
// java.util.Properties, the format of server.properties, the tools'
// --command-config files and every log dir's meta.properties.
//
// Reading (Load, LoadLatin1) follows Properties.load:
//
//   - a logical line is one or more natural lines (ended by \n, \r or
//     \r\n); a natural line ending in an odd number of backslashes
//     continues on the next one, whose leading whitespace is dropped;
//   - lines whose first non-blank character is '#' or '!' are comments,
//     and comments never continue (a continuation line is never a comment);
//   - the key runs to the first unescaped '=', ':' or blank (space, tab,
//     form feed); blanks, at most one '=' or ':', and blanks again separate
//     it from the value;
//   - escapes \t \n \r \f and \uXXXX (UTF-16 code units, so a surrogate
//     pair written as two escapes is one character) are decoded in keys and
//     values; a backslash before any other character yields that character;
//     a lone backslash at the very end of input is dropped;
//   - a later duplicate key replaces an earlier one.
//
// Load takes the bytes as UTF-8 text (Properties.load(Reader)), which is how
// operators write server.properties today; invalid UTF-8 is kept byte for
// byte. LoadLatin1 takes each byte as one ISO-8859-1 character
// (Properties.load(InputStream)), which is how Kafka reads meta.properties.
// The only error is a malformed \uXXXX escape (a *SyntaxError naming the
// line, wrapping ErrMalformedEscape, as Java throws IllegalArgumentException
// "Malformed \uxxxx encoding."). Input never causes a panic, and work and
// memory are linear in the input; callers bound the input size (a
// meta.properties and a server.properties have different sane limits).
//
// Writing (Escape, Format) follows Properties.store(OutputStream):
// backslash, tab, newline, carriage return, form feed, '=', ':', '#' and '!'
// are backslash-escaped, a space is escaped when it starts the text or
// anywhere in a key, and characters outside 0x20..0x7e become \uXXXX
// (UTF-16 units, upper-case hex), so the output is ASCII and Java's load
// reads it back. Bytes that are not valid UTF-8 are written unchanged, so
// that Load(Format(m)) equals m for anything Load returned. Format sorts the
// keys (Java's Hashtable order is not reproducible, and sorted files diff
// well); callers that need a fixed order, such as meta.properties, write
// the lines themselves with Escape.
//
// Tier 0: imports nothing of Samsa.
package javaprops
