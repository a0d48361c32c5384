/// Splits query text into tokens, one at a time, working on UTF-8 bytes.
///
/// Tokens are made on demand so that memory stays proportional to the text, however
/// many tokens it holds; a string literal without escapes is one slice of the input.
struct QueryLexer {
  let source: QuerySourceText
  var position = 0

  init(_ source: QuerySourceText) { self.source = source }

  var bytes: [UInt8] { source.utf8 }

  func byte(_ i: Int) -> UInt8? { i < bytes.count ? bytes[i] : nil }

  /// The next token, consuming it.
  mutating func next() throws(QueryError) -> QueryToken {
    skipWhitespace()
    let start = position
    guard let c = byte(start) else { return QueryToken(kind: .end, start: start, end: start) }
    let kind: QueryToken.Kind
    switch c {
    case UInt8(ascii: "'"), UInt8(ascii: "\""):
      kind = .string(try string(quote: c))
    case UInt8(ascii: "0")...UInt8(ascii: "9"):
      kind = try number()
    case UInt8(ascii: "$"):
      position += 1
      kind = .variable(try name(after: "$", at: start))
    case UInt8(ascii: "@"):
      position += 1
      kind = .aggregate(try name(after: "@", at: start))
    case UInt8(ascii: "#"):
      position += 1
      kind = .identifier(try name(after: "#", at: start), escaped: true)
    default:
      if let scalarLength = identifierStartLength(at: start) {
        position += scalarLength
        scanNameTail()
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if let keyword = QueryKeyword.named(text) {
          kind = .keyword(keyword)
        } else {
          kind = .identifier(text, escaped: false)
        }
      } else {
        kind = .symbol(try symbol())
      }
    }
    return QueryToken(kind: kind, start: start, end: position)
  }

  /// The token after the current position, without consuming it.
  func peek() throws(QueryError) -> QueryToken {
    var copy = self
    return try copy.next()
  }

  // MARK: - Names

  mutating func skipWhitespace() {
    while let c = byte(position), c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == 0x0C {
      position += 1
    }
  }

  /// The UTF-8 length of the scalar at `i` when it can start a name (a letter or `_`,
  /// the rule model names follow), else `nil`.
  private func identifierStartLength(at i: Int) -> Int? {
    guard let (scalar, length) = scalar(at: i) else { return nil }
    return scalar == "_" || scalar.properties.isAlphabetic ? length : nil
  }

  private mutating func scanNameTail() {
    while let (scalar, length) = scalar(at: position),
      scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
    {
      position += length
    }
  }

  /// The name after a `$`, `@` or `#` sigil.
  private mutating func name(after sigil: String, at start: Int) throws(QueryError) -> String {
    let nameStart = position
    guard let length = identifierStartLength(at: nameStart) else {
      throw source.error(.syntax, "expected a name after '\(sigil)'", at: start)
    }
    position += length
    scanNameTail()
    return String(decoding: bytes[nameStart..<position], as: UTF8.self)
  }

  /// Decodes the scalar at `i` (the text is valid UTF-8: it came from a `String`).
  func scalar(at i: Int) -> (Unicode.Scalar, Int)? {
    guard let lead = byte(i) else { return nil }
    if lead < 0x80 { return (Unicode.Scalar(lead), 1) }
    let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
    guard i + length <= bytes.count else { return nil }
    var value = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
    for k in 1..<length { value = value << 6 | (UInt32(bytes[i + k]) & 0x3F) }
    return Unicode.Scalar(value).map { ($0, length) }
  }

  // MARK: - Symbols

  private mutating func symbol() throws(QueryError) -> QuerySymbol {
    let start = position
    let c = bytes[start]
    let d = byte(start + 1)
    func take(_ n: Int, _ s: QuerySymbol) -> QuerySymbol {
      position += n
      return s
    }
    switch c {
    case UInt8(ascii: "("): return take(1, .openParen)
    case UInt8(ascii: ")"): return take(1, .closeParen)
    case UInt8(ascii: "{"): return take(1, .openBrace)
    case UInt8(ascii: "}"): return take(1, .closeBrace)
    case UInt8(ascii: "["): return take(1, .openBracket)
    case UInt8(ascii: "]"): return take(1, .closeBracket)
    case UInt8(ascii: ","): return take(1, .comma)
    case UInt8(ascii: "."): return take(1, .dot)
    case UInt8(ascii: "+"): return take(1, .plus)
    case UInt8(ascii: "-"): return take(1, .minus)
    case UInt8(ascii: "*"): return take(1, .star)
    case UInt8(ascii: "/"): return take(1, .slash)
    case UInt8(ascii: "="):
      if d == UInt8(ascii: "=") { return take(2, .equal) }
      if d == UInt8(ascii: "<") { return take(2, .lessOrEqual) }
      if d == UInt8(ascii: ">") { return take(2, .greaterOrEqual) }
      return take(1, .equal)
    case UInt8(ascii: "!"):
      return d == UInt8(ascii: "=") ? take(2, .notEqual) : take(1, .not)
    case UInt8(ascii: "<"):
      if d == UInt8(ascii: "=") { return take(2, .lessOrEqual) }
      if d == UInt8(ascii: ">") { return take(2, .notEqual) }
      return take(1, .less)
    case UInt8(ascii: ">"):
      return d == UInt8(ascii: "=") ? take(2, .greaterOrEqual) : take(1, .greater)
    case UInt8(ascii: "&") where d == UInt8(ascii: "&"): return take(2, .and)
    case UInt8(ascii: "|") where d == UInt8(ascii: "|"): return take(2, .or)
    default:
      let shown = scalar(at: start).map { String(Character($0.0)) } ?? "?"
      throw source.error(.syntax, "unexpected character '\(shown)'", at: start)
    }
  }

  // MARK: - Numbers

  private mutating func number() throws(QueryError) -> QueryToken.Kind {
    let start = position
    if bytes[start] == UInt8(ascii: "0"), let r = byte(start + 1) {
      let radix: UInt64? =
        switch r | 0x20 {
        case UInt8(ascii: "x"): 16
        case UInt8(ascii: "o"): 8
        case UInt8(ascii: "b"): 2
        default: nil
        }
      if let radix {
        position += 2
        return .integer(try digits(radix: radix, start: start))
      }
    }
    var isInteger = true
    _ = try digits(radix: 10, start: start, checkOverflow: false)
    if byte(position) == UInt8(ascii: "."), let f = byte(position + 1), isDigit(f) {
      isInteger = false
      position += 1
      _ = try digits(radix: 10, start: start, checkOverflow: false)
    }
    if let e = byte(position), e | 0x20 == UInt8(ascii: "e") {
      var p = position + 1
      if let s = byte(p), s == UInt8(ascii: "+") || s == UInt8(ascii: "-") { p += 1 }
      if let f = byte(p), isDigit(f) {
        isInteger = false
        position = p
        _ = try digits(radix: 10, start: start, checkOverflow: false)
      }
    }
    let text = String(decoding: bytes[start..<position], as: UTF8.self)
    if isInteger {
      position = start
      return .integer(try digits(radix: 10, start: start))
    }
    guard let d = Double(text), d.isFinite else {
      throw source.error(.syntax, "number \(text) is out of range", at: start)
    }
    return .double(d)
  }

  private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

  /// Reads digits of `radix` (at least one), returning their value.
  private mutating func digits(radix: UInt64, start: Int, checkOverflow: Bool = true) throws(QueryError) -> UInt64 {
    var value: UInt64 = 0
    var overflow = false
    let first = position
    while let c = byte(position) {
      let digit: UInt64
      switch c {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(c - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt64(c - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt64(c - UInt8(ascii: "A") + 10)
      default: digit = 99
      }
      guard digit < radix else { break }
      let (m, o1) = value.multipliedReportingOverflow(by: radix)
      let (s, o2) = m.addingReportingOverflow(digit)
      overflow = overflow || o1 || o2
      value = s
      position += 1
    }
    guard position > first else {
      throw source.error(.syntax, "expected digits", at: start)
    }
    if checkOverflow && overflow {
      let text = String(decoding: bytes[start..<position], as: UTF8.self)
      throw source.error(.syntax, "integer \(text) is out of range", at: start)
    }
    return value
  }
}
