/// A JSON value, read and written by the project's own strict parser and writer.
///
/// Every public format (model files, mapping files, JSON Lines import and export,
/// `--json` output) goes through this type rather than Foundation's
/// `JSONSerialization`, which loses the order of object keys and rounds large
/// integers through `Double`.
///
/// Integers stay exact: a number written without fraction or exponent that fits
/// `Int64` is ``int(_:)``; every other number is ``double(_:)``. Object members keep
/// the order they were written in, so a file read and written back reads the same.
///
/// ```swift
/// let line = try JSON(parsing: #"{"id": "AddressBook/1", "attributes": {"age": 7}}"#)
/// line["attributes"]?["age"]?.int64Value  // 7
/// line.serialized()                        // the same text back
/// ```
public enum JSON: Sendable, Hashable {
  case null
  case bool(Bool)
  /// A number literal without fraction or exponent that fits `Int64`.
  case int(Int64)
  /// Every other number.
  case double(Double)
  case string(String)
  case array([JSON])
  /// An object, its members in the order they were written.
  case object([JSONField])
}

/// One member of a JSON object: a key and its value.
public struct JSONField: Sendable, Hashable {
  public var key: String
  public var value: JSON

  public init(_ key: String, _ value: JSON) {
    self.key = key
    self.value = value
  }
}

/// A document that is not valid JSON, with the 1-based line and column of the
/// offending character and what was expected there.
public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The 1-based line of the offending character.
  public let line: Int
  /// The 1-based column of the offending character, counted in Unicode scalars.
  public let column: Int
  /// What is wrong, for example "expected ',' or '}' after object member, found ']'".
  public let message: String

  public init(line: Int, column: Int, message: String) {
    self.line = line
    self.column = column
    self.message = message
  }

  public var description: String { "line \(line), column \(column): \(message)" }
}

// MARK: - Reading values

extension JSON {
  /// The member named `key`, when this is an object that has one.
  ///
  /// Objects read by the parser never repeat a key; for one built by hand that does,
  /// the first member wins.
  public subscript(key: String) -> JSON? {
    guard case .object(let fields) = self else { return nil }
    for field in fields where field.key == key { return field.value }
    return nil
  }

  /// The members, when this is an object.
  public var objectFields: [JSONField]? {
    if case .object(let fields) = self { return fields }
    return nil
  }

  /// The elements, when this is an array.
  public var arrayValue: [JSON]? {
    if case .array(let elements) = self { return elements }
    return nil
  }

  /// The string, when this is a string.
  public var stringValue: String? {
    if case .string(let s) = self { return s }
    return nil
  }

  /// The integer, when this is an integer (a number written without fraction or exponent).
  public var int64Value: Int64? {
    if case .int(let n) = self { return n }
    return nil
  }

  /// The number as a double, when this is a number of either kind.
  public var doubleValue: Double? {
    switch self {
    case .int(let n): Double(n)
    case .double(let d): d
    default: nil
    }
  }

  /// The Boolean, when this is `true` or `false`.
  public var boolValue: Bool? {
    if case .bool(let b) = self { return b }
    return nil
  }

  /// Whether this is `null`.
  public var isNull: Bool {
    if case .null = self { return true }
    return false
  }

  /// What kind of value this is, with its article, for messages: "a string", "null".
  public var kindDescription: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .int: "an integer"
    case .double: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}

// MARK: - Literals

extension JSON: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
  ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(integerLiteral value: Int64) { self = .int(value) }
  public init(floatLiteral value: Double) { self = .double(value) }
  public init(stringLiteral value: String) { self = .string(value) }
  public init(arrayLiteral elements: JSON...) { self = .array(elements) }

  /// An object whose members keep the order of the literal.
  public init(dictionaryLiteral elements: (String, JSON)...) {
    self = .object(elements.map { JSONField($0.0, $0.1) })
  }
}

extension JSON: CustomStringConvertible {
  /// The compact serialization, as ``serialized()`` writes it.
  public var description: String { serialized() }
}
