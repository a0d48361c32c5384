extension JSON {
  /// The value as compact JSON on one line, object keys in their stored order.
  ///
  /// The layout is the one the project's formats show: `{"id": "AddressBook/1", "tags": [1, 2]}`
  /// — a space after each `:` and `,`, none inside brackets. Non-ASCII text is written as
  /// UTF-8 rather than `\u` escapes; control characters, `"` and `\` are escaped, `/` is
  /// not. A double is written in its shortest form that reads back to the same double,
  /// always with a `.` or an exponent (`1.0`, never `1`) so it parses back as a double;
  /// a non-finite double, which JSON cannot express, is written as `null`.
  public func serialized() -> String {
    serialized(pretty: false)
  }

  /// The value as JSON, compact on one line or, with `pretty`, indented by two spaces
  /// with one member or element a line.
  public func serialized(pretty: Bool) -> String {
    var writer = JSONWriter(pretty: pretty)
    writer.write(self, depth: 0)
    return String(decoding: writer.output, as: UTF8.self)
  }
}

/// Writes JSON values as UTF-8 into a byte buffer.
struct JSONWriter {
  private(set) var output: [UInt8] = []
  private let pretty: Bool

  init(pretty: Bool) {
    self.pretty = pretty
    output.reserveCapacity(256)
  }

  mutating func write(_ value: JSON, depth: Int) {
    switch value {
    case .null:
      append("null")
    case .bool(let b):
      append(b ? "true" : "false")
    case .int(let n):
      append(String(n))
    case .double(let d):
      writeDouble(d)
    case .string(let s):
      writeString(s)
    case .array(let elements):
      guard !elements.isEmpty else { return append("[]") }
      output.append(UInt8(ascii: "["))
      for (position, element) in elements.enumerated() {
        if position > 0 { writeSeparator() }
        writeNewline(depth: depth + 1)
        write(element, depth: depth + 1)
      }
      writeNewline(depth: depth)
      output.append(UInt8(ascii: "]"))
    case .object(let fields):
      guard !fields.isEmpty else { return append("{}") }
      output.append(UInt8(ascii: "{"))
      for (position, field) in fields.enumerated() {
        if position > 0 { writeSeparator() }
        writeNewline(depth: depth + 1)
        writeString(field.key)
        append(": ")
        write(field.value, depth: depth + 1)
      }
      writeNewline(depth: depth)
      output.append(UInt8(ascii: "}"))
    }
  }

  // MARK: - Layout

  private mutating func writeSeparator() {
    output.append(UInt8(ascii: ","))
    if !pretty { output.append(UInt8(ascii: " ")) }
  }

  private mutating func writeNewline(depth: Int) {
    guard pretty else { return }
    output.append(UInt8(ascii: "\n"))
    output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
  }

  private mutating func append(_ text: String) {
    output.append(contentsOf: text.utf8)
  }

  // MARK: - Scalars

  /// Swift's `description` of a finite double is already the shortest text that reads
  /// back to the same value, and always has a `.` or an exponent (`1.0`, `1e-05`,
  /// `1e+20`), each of which is valid JSON.
  private mutating func writeDouble(_ d: Double) {
    guard d.isFinite else { return append("null") }
    append(d.description)
  }

  private mutating func writeString(_ s: String) {
    output.append(UInt8(ascii: "\""))
    for byte in s.utf8 {
      switch byte {
      case UInt8(ascii: "\""): append("\\\"")
      case UInt8(ascii: "\\"): append("\\\\")
      case 0x0A: append("\\n")
      case 0x0D: append("\\r")
      case 0x09: append("\\t")
      case 0x08: append("\\b")
      case 0x0C: append("\\f")
      case 0x00..<0x20:
        append("\\u00")
        output.append(Self.hexDigits[Int(byte >> 4)])
        output.append(Self.hexDigits[Int(byte & 0x0F)])
      default:
        output.append(byte)
      }
    }
    output.append(UInt8(ascii: "\""))
  }

  private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
}
