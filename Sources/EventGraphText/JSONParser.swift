extension JSON {
  /// Parses a JSON document (RFC 8259, strictly).
  ///
  /// No trailing commas, comments, leading zeros, `NaN` or `Infinity`; no duplicate key
  /// in one object; nothing but whitespace after the value; at most 512 levels of nested
  /// arrays and objects.
  ///
  /// - Throws: ``JSONError`` with the line and column of the offending character and
  ///   what was expected there.
  public init(parsing text: String) throws(JSONError) {
    var parser = JSONParser(bytes: Array(text.utf8))
    self = try parser.parseDocument()
  }

  /// Parses a JSON document from UTF-8 bytes; invalid UTF-8 is an error.
  ///
  /// A leading UTF-8 byte order mark is skipped, as RFC 8259 allows.
  ///
  /// - Throws: ``JSONError`` with the line and column of the offending character and
  ///   what was expected there.
  public init(parsing bytes: some Collection<UInt8>) throws(JSONError) {
    var parser = JSONParser(bytes: Array(bytes))
    self = try parser.parseDocument()
  }
}

/// A strict RFC 8259 parser over a byte buffer.
///
/// Containers are parsed with an explicit stack rather than by recursion, so the depth
/// limit is a plain count and a hostile document of 100,000 `[` ends in an error, never
/// in a stack overflow.
struct JSONParser {
  /// The deepest nesting of arrays and objects accepted.
  static let maximumDepth = 512

  /// An array or object being read: its members so far.
  private struct Frame {
    var isObject: Bool
    var elements: [JSON] = []
    var fields: [JSONField] = []
    /// The key whose value is being read, in an object.
    var pendingKey = ""
    /// The keys so far, once an object is large enough that a linear search for
    /// duplicates would cost more than hashing.
    var keys: Set<String>?
  }

  private let bytes: [UInt8]
  private let end: Int
  /// Where the document starts: 3 when it opens with a byte order mark.
  private let start: Int
  private var index: Int

  init(bytes: [UInt8]) {
    self.bytes = bytes
    end = bytes.count
    let hasByteOrderMark = bytes.starts(with: [0xEF, 0xBB, 0xBF])
    start = hasByteOrderMark ? 3 : 0
    index = start
  }

  // MARK: - Document structure

  /// Parses the whole buffer as one JSON value.
  mutating func parseDocument() throws(JSONError) -> JSON {
    var stack: [Frame] = []
    var expectation = "expected a JSON value"
    while true {
      skipWhitespace()
      var value: JSON
      switch peek() {
      case Byte.openBrace:
        guard stack.count < Self.maximumDepth else { throw tooDeep(at: index) }
        index += 1
        skipWhitespace()
        if peek() == Byte.closeBrace {
          index += 1
          value = .object([])
        } else {
          let key = try parseKey(expectation: "expected a string key or '}' after '{'")
          try expectColon(after: key)
          stack.append(Frame(isObject: true, pendingKey: key))
          expectation = "expected a value for key '\(key)'"
          continue
        }
      case Byte.openBracket:
        guard stack.count < Self.maximumDepth else { throw tooDeep(at: index) }
        index += 1
        skipWhitespace()
        if peek() == Byte.closeBracket {
          index += 1
          value = .array([])
        } else {
          stack.append(Frame(isObject: false))
          expectation = "expected a value or ']' after '['"
          continue
        }
      case Byte.quote:
        value = .string(try parseString())
      case Byte.minus, Byte.zero...Byte.nine:
        value = try parseNumber()
      case Byte.lowercaseT:
        try expectLiteral(Self.trueLiteral)
        value = .bool(true)
      case Byte.lowercaseF:
        try expectLiteral(Self.falseLiteral)
        value = .bool(false)
      case Byte.lowercaseN:
        try expectLiteral(Self.nullLiteral)
        value = .null
      default:
        throw failure(expectation, at: index)
      }

      // Hand the finished value to its container, closing every container that ends here.
      attach: while true {
        skipWhitespace()
        guard !stack.isEmpty else {
          guard index == end else { throw failure("expected end of input after the JSON value", at: index) }
          return value
        }
        let top = stack.count - 1
        if stack[top].isObject {
          stack[top].fields.append(JSONField(stack[top].pendingKey, value))
          if peek() == Byte.comma {
            index += 1
            skipWhitespace()
            let keyOffset = index
            let key = try parseKey(expectation: "expected a string key after ',' in object")
            try checkUnique(key, at: keyOffset, in: &stack[top])
            try expectColon(after: key)
            stack[top].pendingKey = key
            expectation = "expected a value for key '\(key)'"
            break attach
          } else if peek() == Byte.closeBrace {
            index += 1
            value = .object(stack.removeLast().fields)
          } else {
            throw failure("expected ',' or '}' after object member", at: index)
          }
        } else {
          stack[top].elements.append(value)
          if peek() == Byte.comma {
            index += 1
            expectation = "expected a value after ',' in array"
            break attach
          } else if peek() == Byte.closeBracket {
            index += 1
            value = .array(stack.removeLast().elements)
          } else {
            throw failure("expected ',' or ']' after array element", at: index)
          }
        }
      }
    }
  }

  /// Reads an object key (a string) at the current position.
  private mutating func parseKey(expectation: String) throws(JSONError) -> String {
    guard peek() == Byte.quote else { throw failure(expectation, at: index) }
    return try parseString()
  }

  private mutating func expectColon(after key: String) throws(JSONError) {
    skipWhitespace()
    guard peek() == Byte.colon else { throw failure("expected ':' after object key '\(key)'", at: index) }
    index += 1
  }

  /// Throws when `key` is already a member of the object being read.
  ///
  /// Small objects are searched linearly; from `hashingThreshold` members on, a set
  /// of the keys is kept so a large object stays linear to read.
  private func checkUnique(_ key: String, at offset: Int, in frame: inout Frame) throws(JSONError) {
    let hashingThreshold = 12
    if let inserted = frame.keys?.insert(key).inserted {
      if !inserted { throw duplicate(key, at: offset) }
      return
    }
    for field in frame.fields where field.key == key { throw duplicate(key, at: offset) }
    if frame.fields.count + 1 >= hashingThreshold {
      var keys = Set(frame.fields.map(\.key))
      keys.insert(key)
      frame.keys = keys
    }
  }

  // MARK: - Scalars

  private static let trueLiteral: [UInt8] = Array("true".utf8)
  private static let falseLiteral: [UInt8] = Array("false".utf8)
  private static let nullLiteral: [UInt8] = Array("null".utf8)

  private mutating func expectLiteral(_ literal: [UInt8]) throws(JSONError) {
    let name = String(decoding: literal, as: UTF8.self)
    for byte in literal {
      guard peek() == byte else { throw failure("expected '\(name)'", at: index) }
      index += 1
    }
  }

  /// Reads a string starting at its opening quote.
  ///
  /// The common case, a string without escapes, is sliced straight out of the buffer;
  /// only a string with escapes is copied byte by byte.
  private mutating func parseString() throws(JSONError) -> String {
    index += 1
    let contentStart = index
    while index < end {
      let byte = bytes[index]
      if byte == Byte.quote {
        let text = String(decoding: bytes[contentStart..<index], as: UTF8.self)
        index += 1
        return text
      } else if byte == Byte.backslash {
        return try parseEscapedString(from: contentStart)
      } else if byte < 0x20 {
        throw failure("control character must be escaped in a string", at: index)
      } else if byte < 0x80 {
        index += 1
      } else {
        try skipUTF8Sequence()
      }
    }
    throw failure("expected '\"' to end the string", at: index)
  }

  /// Finishes a string that contains escapes, from `contentStart` (after its opening quote).
  private mutating func parseEscapedString(from contentStart: Int) throws(JSONError) -> String {
    var buffer = Array(bytes[contentStart..<index])
    buffer.reserveCapacity(buffer.count + 16)
    while index < end {
      let byte = bytes[index]
      if byte == Byte.quote {
        index += 1
        return String(decoding: buffer, as: UTF8.self)
      } else if byte == Byte.backslash {
        try parseEscape(into: &buffer)
      } else if byte < 0x20 {
        throw failure("control character must be escaped in a string", at: index)
      } else if byte < 0x80 {
        buffer.append(byte)
        index += 1
      } else {
        let sequenceStart = index
        try skipUTF8Sequence()
        buffer.append(contentsOf: bytes[sequenceStart..<index])
      }
    }
    throw failure("expected '\"' to end the string", at: index)
  }

  /// Decodes one escape sequence starting at its backslash and appends its UTF-8.
  private mutating func parseEscape(into buffer: inout [UInt8]) throws(JSONError) {
    let escapeStart = index
    index += 1
    let letter = peek()
    index += 1
    switch letter {
    case Byte.quote: buffer.append(Byte.quote)
    case Byte.backslash: buffer.append(Byte.backslash)
    case Byte.slash: buffer.append(Byte.slash)
    case Byte.lowercaseB: buffer.append(0x08)
    case Byte.lowercaseF: buffer.append(0x0C)
    case Byte.lowercaseN: buffer.append(0x0A)
    case Byte.lowercaseR: buffer.append(0x0D)
    case Byte.lowercaseT: buffer.append(0x09)
    case Byte.lowercaseU:
      let scalar = try parseUnicodeEscape(escapeStart: escapeStart)
      buffer.append(contentsOf: scalar.utf8)
    default:
      throw failure(
        "invalid escape: expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", at: escapeStart + 1)
    }
  }

  /// Decodes `\uXXXX` (the backslash and `u` already read), joining a surrogate pair.
  private mutating func parseUnicodeEscape(escapeStart: Int) throws(JSONError) -> Unicode.Scalar {
    let unit = try parseHex4()
    var value = UInt32(unit)
    switch unit {
    case 0xD800...0xDBFF:
      let lowStart = index
      guard peek() == Byte.backslash, index + 1 < end, bytes[index + 1] == Byte.lowercaseU else {
        throw error(
          "lone surrogate \\u\(Self.hex(unit)): expected a low surrogate escape (\\uDC00-\\uDFFF) to follow",
          at: escapeStart)
      }
      index += 2
      let low = try parseHex4()
      guard (0xDC00...0xDFFF).contains(low) else {
        throw error(
          "expected a low surrogate (\\uDC00-\\uDFFF) after \\u\(Self.hex(unit)), found \\u\(Self.hex(low))",
          at: lowStart)
      }
      value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
    case 0xDC00...0xDFFF:
      throw error(
        "lone surrogate \\u\(Self.hex(unit)): a low surrogate must follow a high surrogate", at: escapeStart)
    default:
      break
    }
    // Surrogates were handled above, so every value that reaches here is a scalar.
    guard let scalar = Unicode.Scalar(value) else {
      throw failure("invalid Unicode escape", at: escapeStart)
    }
    return scalar
  }

  private mutating func parseHex4() throws(JSONError) -> UInt16 {
    var unit: UInt16 = 0
    for _ in 0..<4 {
      let byte = peek()
      let digit: UInt8
      switch byte {
      case Byte.zero...Byte.nine: digit = byte - Byte.zero
      case Byte.lowercaseA...Byte.lowercaseF: digit = byte - Byte.lowercaseA + 10
      case Byte.uppercaseA...Byte.uppercaseF: digit = byte - Byte.uppercaseA + 10
      default: throw failure("expected 4 hexadecimal digits after '\\u'", at: index)
      }
      unit = unit << 4 | UInt16(digit)
      index += 1
    }
    return unit
  }

  /// Steps over one well-formed multi-byte UTF-8 sequence (RFC 3629), or throws at the
  /// first byte that cannot belong to one.
  private mutating func skipUTF8Sequence() throws(JSONError) {
    let lead = bytes[index]
    let length: Int
    var secondRange: ClosedRange<UInt8> = 0x80...0xBF
    switch lead {
    case 0xC2...0xDF: length = 2
    case 0xE0: length = 3; secondRange = 0xA0...0xBF
    case 0xE1...0xEC, 0xEE...0xEF: length = 3
    case 0xED: length = 3; secondRange = 0x80...0x9F
    case 0xF0: length = 4; secondRange = 0x90...0xBF
    case 0xF1...0xF3: length = 4
    case 0xF4: length = 4; secondRange = 0x80...0x8F
    default: throw error("invalid UTF-8: byte 0x\(Self.hex(lead)) cannot start a character", at: index)
    }
    for offset in 1..<length {
      let position = index + offset
      let range = offset == 1 ? secondRange : 0x80...0xBF
      guard position < end, range.contains(bytes[position]) else {
        let found = position < end ? "byte 0x\(Self.hex(bytes[position]))" : "end of input"
        throw error("invalid UTF-8 sequence: \(found) cannot follow byte 0x\(Self.hex(lead))", at: position)
      }
    }
    index += length
  }

  // MARK: - Numbers

  /// Exact powers of ten: a mantissa below 2^53 times or divided by one of these is
  /// correctly rounded (Clinger's fast path), so most numbers avoid `strtod`.
  private static let exactPowersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
  ]

  private mutating func parseNumber() throws(JSONError) -> JSON {
    let numberStart = index
    let isNegative = peek() == Byte.minus
    if isNegative { index += 1 }
    var mantissa: UInt64 = 0
    var mantissaOverflowed = false
    var isInteger = true
    var fractionDigits = 0

    func accumulate(_ byte: UInt8) {
      let (times10, overflow1) = mantissa.multipliedReportingOverflow(by: 10)
      let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - Byte.zero))
      if overflow1 || overflow2 { mantissaOverflowed = true } else { mantissa = sum }
    }

    guard isDigit(peek()) else { throw failure("expected a digit after '-'", at: index) }
    if peek() == Byte.zero {
      index += 1
      if isDigit(peek()) { throw failure("leading zeros are not allowed in a number", at: index) }
    } else {
      while isDigit(peek()) {
        accumulate(bytes[index])
        index += 1
      }
    }
    if peek() == Byte.dot {
      isInteger = false
      index += 1
      guard isDigit(peek()) else { throw failure("expected a digit after '.'", at: index) }
      while isDigit(peek()) {
        accumulate(bytes[index])
        if !mantissaOverflowed { fractionDigits += 1 }
        index += 1
      }
    }
    var exponent = 0
    if peek() == Byte.lowercaseE || peek() == Byte.uppercaseE {
      isInteger = false
      index += 1
      var exponentIsNegative = false
      if peek() == Byte.plus || peek() == Byte.minus {
        exponentIsNegative = peek() == Byte.minus
        index += 1
      }
      guard isDigit(peek()) else { throw failure("expected a digit in the exponent", at: index) }
      while isDigit(peek()) {
        // Saturate: anything this large over- or underflows a double anyway.
        exponent = min(exponent * 10 + Int(bytes[index] - Byte.zero), 1_000_000)
        index += 1
      }
      if exponentIsNegative { exponent = -exponent }
    }

    if isInteger && !mantissaOverflowed {
      if isNegative, mantissa <= UInt64(Int64.max) + 1 {
        return .int(Int64(bitPattern: 0 &- mantissa))
      } else if !isNegative, mantissa <= UInt64(Int64.max) {
        return .int(Int64(mantissa))
      }
    }
    let decimalExponent = exponent - fractionDigits
    if !mantissaOverflowed, mantissa <= 1 << 53, (-22...22).contains(decimalExponent) {
      let magnitude = Double(mantissa)
      let power = Self.exactPowersOfTen[abs(decimalExponent)]
      let value = decimalExponent < 0 ? magnitude / power : magnitude * power
      return .double(isNegative ? -value : value)
    }
    let text = String(decoding: bytes[numberStart..<index], as: UTF8.self)
    guard let value = Double(text), value.isFinite else {
      throw error("number \(text) is out of the range of a double", at: numberStart)
    }
    return .double(value)
  }

  // MARK: - Bytes

  /// The byte at the current position, or 0 at the end (0 is never valid there).
  @inline(__always)
  private func peek() -> UInt8 {
    index < end ? bytes[index] : 0
  }

  @inline(__always)
  private func isDigit(_ byte: UInt8) -> Bool {
    byte &- Byte.zero < 10
  }

  @inline(__always)
  private mutating func skipWhitespace() {
    while index < end {
      switch bytes[index] {
      case 0x20, 0x0A, 0x0D, 0x09: index += 1
      default: return
      }
    }
  }

  // MARK: - Errors

  /// An error at `offset` saying what was expected there and what was found instead.
  private func failure(_ expectation: String, at offset: Int) -> JSONError {
    error("\(expectation), found \(describeCharacter(at: offset))", at: offset)
  }

  private func duplicate(_ key: String, at offset: Int) -> JSONError {
    error("duplicate key '\(key)' in object", at: offset)
  }

  private func tooDeep(at offset: Int) -> JSONError {
    error("arrays and objects nested deeper than \(Self.maximumDepth) levels", at: offset)
  }

  private func error(_ message: String, at offset: Int) -> JSONError {
    let (line, column) = location(of: offset)
    return JSONError(line: line, column: column, message: message)
  }

  /// The character at `offset`, as a message shows it: `'x'`, `newline`, `end of input`.
  private func describeCharacter(at offset: Int) -> String {
    guard offset < end else { return "end of input" }
    let byte = bytes[offset]
    switch byte {
    case 0x0A: return "newline"
    case 0x0D: return "carriage return"
    case 0x09: return "tab"
    case 0x00..<0x20, 0x7F: return "control character U+00\(Self.hex(byte))"
    case 0x20..<0x7F: return "'\(Character(Unicode.Scalar(byte)))'"
    default:
      let sequence = bytes[offset..<min(offset + 4, end)]
      if let scalar = String(decoding: sequence, as: UTF8.self).unicodeScalars.first, scalar != "\u{FFFD}" {
        return "'\(scalar)'"
      }
      return "byte 0x\(Self.hex(byte))"
    }
  }

  /// The 1-based line and column of a byte offset; columns count Unicode scalars.
  ///
  /// Computed only when an error is thrown, so the parsing loop never tracks lines.
  private func location(of offset: Int) -> (line: Int, column: Int) {
    let clamped = min(offset, end)
    var line = 1
    var lineStart = start
    for position in start..<clamped where bytes[position] == 0x0A {
      line += 1
      lineStart = position + 1
    }
    var column = 1
    for position in lineStart..<clamped where bytes[position] & 0xC0 != 0x80 {
      column += 1
    }
    return (line, column)
  }

  // MARK: - Names

  /// Hexadecimal digits of an integer, upper case and zero-padded to its byte width.
  private static func hex(_ value: some FixedWidthInteger) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    let width = value.bitWidth / 4
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }

  /// The ASCII bytes the grammar mentions, by name.
  private enum Byte {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let slash = UInt8(ascii: "/")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let lowercaseA = UInt8(ascii: "a")
    static let lowercaseB = UInt8(ascii: "b")
    static let lowercaseE = UInt8(ascii: "e")
    static let lowercaseF = UInt8(ascii: "f")
    static let lowercaseN = UInt8(ascii: "n")
    static let lowercaseR = UInt8(ascii: "r")
    static let lowercaseT = UInt8(ascii: "t")
    static let lowercaseU = UInt8(ascii: "u")
    static let uppercaseA = UInt8(ascii: "A")
    static let uppercaseE = UInt8(ascii: "E")
    static let uppercaseF = UInt8(ascii: "F")
  }
}
