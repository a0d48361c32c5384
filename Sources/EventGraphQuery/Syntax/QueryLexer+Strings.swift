extension QueryLexer {
  /// Reads a string literal starting at the current position (on its opening quote).
  ///
  /// A literal without escapes becomes one slice of the input, so a 10 MB literal costs
  /// one scan and one copy.
  ///
  /// Escapes: `\n \t \r \0 \\ \' \"`, `\u{1F600}` and `\u00E9`; a backslash before any
  /// other character stays in the string (`'\d'` is backslash, d).
  ///
  /// - Throws: ``QueryError`` at the opening quote when the literal is not closed, at
  ///   the backslash of a malformed `\u` escape.
  mutating func string(quote: UInt8) throws(QueryError) -> String {
    let open = position
    position += 1
    var segmentStart = position
    var built: [UInt8]? = nil
    while true {
      guard let i = bytes[position...].firstIndex(where: { $0 == quote || $0 == UInt8(ascii: "\\") }) else {
        throw source.error(.syntax, "unterminated string literal (it starts here)", at: open)
      }
      if bytes[i] == quote {
        position = i + 1
        guard var result = built else {
          return String(decoding: bytes[segmentStart..<i], as: UTF8.self)
        }
        result.append(contentsOf: bytes[segmentStart..<i])
        return String(decoding: result, as: UTF8.self)
      }
      var result = built ?? []
      result.append(contentsOf: bytes[segmentStart..<i])
      position = i
      try escape(into: &result, literalStart: open)
      built = result
      segmentStart = position
    }
  }

  /// Decodes the escape sequence at the current position (on the backslash).
  private mutating func escape(into result: inout [UInt8], literalStart: Int) throws(QueryError) {
    let backslash = position
    guard let c = byte(position + 1) else {
      throw source.error(.syntax, "unterminated string literal (it starts here)", at: literalStart)
    }
    position += 2
    switch c {
    case UInt8(ascii: "n"): result.append(0x0A)
    case UInt8(ascii: "t"): result.append(0x09)
    case UInt8(ascii: "r"): result.append(0x0D)
    case UInt8(ascii: "0"): result.append(0x00)
    case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""): result.append(c)
    case UInt8(ascii: "u"):
      let value: UInt32
      if byte(position) == UInt8(ascii: "{") {
        position += 1
        value = try hex(minimum: 1, maximum: 8, at: backslash)
        guard byte(position) == UInt8(ascii: "}") else {
          throw source.error(.syntax, "expected '}' to close the \\u{…} escape", at: position)
        }
        position += 1
      } else {
        value = try hex(minimum: 4, maximum: 4, at: backslash)
      }
      guard let scalar = Unicode.Scalar(value) else {
        throw source.error(.syntax, "escape \\u{\(String(value, radix: 16))} is not a Unicode scalar", at: backslash)
      }
      result.append(contentsOf: String(Character(scalar)).utf8)
    default:
      // Any other escape keeps its backslash, so that patterns read naturally:
      // `MATCHES '\d+'` is the regular expression `\d+`.
      result.append(UInt8(ascii: "\\"))
      position -= 1
    }
  }

  private mutating func hex(minimum: Int, maximum: Int, at backslash: Int) throws(QueryError) -> UInt32 {
    var value: UInt32 = 0
    var count = 0
    while count < maximum, let c = byte(position), let digit = Self.hexDigit(c) {
      value = value << 4 | digit
      count += 1
      position += 1
    }
    guard count >= minimum else {
      throw source.error(
        .syntax, "expected \(minimum == maximum ? "\(minimum)" : "1 to \(maximum)") hexadecimal digits in \\u escape",
        at: backslash)
    }
    return value
  }

  private static func hexDigit(_ c: UInt8) -> UInt32? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(c - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(c - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(c - UInt8(ascii: "A") + 10)
    default: nil
    }
  }
}
