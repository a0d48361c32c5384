/// A property list value as the readers of this module see it.
///
/// Apple's binary and XML plists both become this. `uid` is a keyed archive's reference into its `$objects`.
public indirect enum PlistValue: Sendable, Hashable {
  case bool(Bool)
  case int(Int64)
  case real(Double)
  /// Seconds since 2001-01-01 00:00:00 UTC, as plists keep dates.
  case date(Double)
  case data([UInt8])
  case string(String)
  case uid(Int)
  case array([PlistValue])
  /// A dictionary's entries in file order (a plist's keys are strings here; a binary
  /// plist with another kind of key is refused).
  case dictionary([(key: String, value: PlistValue)])

  public static func == (a: PlistValue, b: PlistValue) -> Bool {
    switch (a, b) {
    case (.bool(let x), .bool(let y)): x == y
    case (.int(let x), .int(let y)): x == y
    case (.real(let x), .real(let y)): x == y
    case (.date(let x), .date(let y)): x == y
    case (.data(let x), .data(let y)): x == y
    case (.string(let x), .string(let y)): x == y
    case (.uid(let x), .uid(let y)): x == y
    case (.array(let x), .array(let y)): x == y
    case (.dictionary(let x), .dictionary(let y)):
      x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    default: false
    }
  }

  public func hash(into h: inout Hasher) {
    switch self {
    case .bool(let x): h.combine(x)
    case .int(let x): h.combine(x)
    case .real(let x), .date(let x): h.combine(x)
    case .data(let x): h.combine(x)
    case .string(let x): h.combine(x)
    case .uid(let x): h.combine(x)
    case .array(let x): h.combine(x)
    case .dictionary(let x):
      for (k, v) in x {
        h.combine(k)
        h.combine(v)
      }
    }
  }

  /// The value for `key`, when this is a dictionary that has one.
  public subscript(key: String) -> PlistValue? {
    guard case .dictionary(let entries) = self else { return nil }
    return entries.first { $0.key == key }?.value
  }

  public var string: String? {
    if case .string(let s) = self { return s }
    return nil
  }

  public var int: Int64? {
    switch self {
    case .int(let n): n
    case .bool(let b): b ? 1 : 0
    case .real(let d) where d.rounded() == d && abs(d) < 9e18: Int64(d)
    default: nil
    }
  }

  /// A boolean, also from the `YES`/`NO` strings and 0/1 numbers old archives use.
  public var bool: Bool? {
    switch self {
    case .bool(let b): b
    case .int(let n): n != 0
    case .string("YES"), .string("yes"), .string("true"), .string("1"): true
    case .string("NO"), .string("no"), .string("false"), .string("0"): false
    default: nil
    }
  }

  public var uid: Int? {
    if case .uid(let u) = self { return u }
    return nil
  }

  public var array: [PlistValue]? {
    if case .array(let a) = self { return a }
    return nil
  }

  public var dictionary: [(key: String, value: PlistValue)]? {
    if case .dictionary(let d) = self { return d }
    return nil
  }

  /// The value as plain text, for defaults and user info: numbers and booleans spelled.
  var text: String? {
    switch self {
    case .string(let s): s
    case .int(let n): String(n)
    case .real(let d): String(d)
    case .bool(let b): b ? "YES" : "NO"
    case .date(let d): String(d)
    default: nil
    }
  }
}

/// A property list that cannot be read: what is wrong, and where in the file.
public struct PlistError: Error, Sendable, Equatable, CustomStringConvertible {
  public let message: String
  public init(_ message: String) { self.message = message }
  public var description: String { message }
}
