internal import EventGraphText

/// Bad input in a JSON Lines file: the line, the field, and what is wrong.
public struct FormatError: RemediedError, Sendable, Hashable {
  /// 1-based line number in the input.
  public var line: Int
  /// The field at fault (`attributes.type`), empty when the whole line is.
  public var field: String
  public var message: String
  /// What a user can do, if anything.
  public var remedy: Remedy?

  public init(line: Int, field: String = "", message: String, remedy: Remedy? = nil) {
    self.line = line
    self.field = field
    self.message = message
    self.remedy = remedy
  }

  public var problem: String {
    field.isEmpty ? "line \(line): \(message)" : "line \(line): \(field): \(message)"
  }
}

/// Splits JSON Lines input into (line number, parsed JSON) pairs, skipping blank lines.
enum JSONLines {
  static func parse(_ bytes: [UInt8]) throws(FormatError) -> [(line: Int, json: JSON)] {
    var result: [(Int, JSON)] = []
    var line = 1
    var start = 0
    func take(_ end: Int) throws(FormatError) {
      let slice = bytes[start..<end]
      if slice.contains(where: { $0 != 32 && $0 != 9 && $0 != 13 }) {
        do {
          result.append((line, try JSON(parsing: slice)))
        } catch {
          throw FormatError(line: line, message: "invalid JSON at column \(error.column): \(error.message)")
        }
      }
    }
    for (i, b) in bytes.enumerated() where b == 10 {
      try take(i)
      start = i + 1
      line += 1
    }
    try take(bytes.count)
    return result
  }
}
