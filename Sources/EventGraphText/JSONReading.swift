/// A member of a JSON file that does not have the shape its format requires, with the
/// path to the object at fault.
///
/// The description reads
/// `entities[0].attributes[2]: unknown key 'optinal' (did you mean 'optional'?)`.
public struct JSONReadError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The path to the object at fault, such as `entities[0].attributes[2]`; may be empty
  /// for the top-level object.
  public let context: String
  /// What is wrong.
  public let message: String

  public init(context: String, message: String) {
    self.context = context
    self.message = message
  }

  public var description: String { context.isEmpty ? message : "\(context): \(message)" }
}

/// Strict, typed access to the members of one JSON object, with errors that say where.
///
/// Model files, mapping files and JSON Lines records are read through this type so that
/// a missing key, a value of the wrong type or an unknown key (a typo) is always an error
/// naming the object and the key — never silently ignored.
///
/// ```swift
/// let attribute = try JSONObjectReader(json, context: "entities[0].attributes[2]")
/// try attribute.rejectUnknownKeys(allowed: ["name", "type", "optional", "default"])
/// let name = try attribute.string("name")
/// let optional = try attribute.bool("optional", default: false)
/// ```
///
/// Optional members treat `null` as absent.
public struct JSONObjectReader: Sendable {
  /// The path to this object, used in every error; nested readers extend it.
  public let context: String
  /// The members of the object, in written order.
  public let fields: [JSONField]

  /// Wraps `value`, which must be an object.
  ///
  /// - Throws: ``JSONReadError`` when `value` is not an object.
  public init(_ value: JSON, context: String) throws(JSONReadError) {
    guard case .object(let fields) = value else {
      throw JSONReadError(context: context, message: "expected an object, found \(value.kindDescription)")
    }
    self.context = context
    self.fields = fields
  }

  /// The keys of the object, in written order.
  public var keys: [String] { fields.map(\.key) }

  /// Whether the object has a member `key` (even a `null` one).
  public func contains(_ key: String) -> Bool {
    fields.contains { $0.key == key }
  }

  /// The member `key` as written (possibly `.null`), or nil when it is absent.
  public func optionalValue(_ key: String) -> JSON? {
    for field in fields where field.key == key { return field.value }
    return nil
  }

  /// The member `key`, which must be present (it may be `null`).
  public func value(_ key: String) throws(JSONReadError) -> JSON {
    guard let value = optionalValue(key) else { throw error("missing required key '\(key)'") }
    return value
  }

  // MARK: - Strings

  /// The required string member `key`.
  public func string(_ key: String) throws(JSONReadError) -> String {
    let value = try value(key)
    guard case .string(let s) = value else { throw wrongType(key, expected: "a string", found: value) }
    return s
  }

  /// The string member `key`, or nil when it is absent or `null`.
  public func optionalString(_ key: String) throws(JSONReadError) -> String? {
    guard let value = presentValue(key) else { return nil }
    guard case .string(let s) = value else { throw wrongType(key, expected: "a string", found: value) }
    return s
  }

  // MARK: - Booleans and numbers

  /// The Boolean member `key`, or `default` when it is absent or `null`.
  public func bool(_ key: String, default defaultValue: Bool) throws(JSONReadError) -> Bool {
    try optionalBool(key) ?? defaultValue
  }

  /// The Boolean member `key`, or nil when it is absent or `null`.
  public func optionalBool(_ key: String) throws(JSONReadError) -> Bool? {
    guard let value = presentValue(key) else { return nil }
    guard case .bool(let b) = value else { throw wrongType(key, expected: "true or false", found: value) }
    return b
  }

  /// The required integer member `key`; a number with a fraction or exponent is refused.
  public func int(_ key: String) throws(JSONReadError) -> Int {
    guard let n = try optionalInt(key) else { throw error("missing required key '\(key)'") }
    return n
  }

  /// The integer member `key`, or nil when it is absent or `null`.
  public func optionalInt(_ key: String) throws(JSONReadError) -> Int? {
    guard let value = presentValue(key) else { return nil }
    guard case .int(let n) = value, let int = Int(exactly: n) else {
      throw wrongType(key, expected: "an integer", found: value)
    }
    return int
  }

  /// The number member `key` (integer or not), or nil when it is absent or `null`.
  public func optionalDouble(_ key: String) throws(JSONReadError) -> Double? {
    guard let value = presentValue(key) else { return nil }
    guard let d = value.doubleValue else { throw wrongType(key, expected: "a number", found: value) }
    return d
  }

  // MARK: - Arrays and objects

  /// The array member `key`; empty when it is absent or `null`.
  public func array(_ key: String) throws(JSONReadError) -> [JSON] {
    guard let value = presentValue(key) else { return [] }
    guard case .array(let elements) = value else { throw wrongType(key, expected: "an array", found: value) }
    return elements
  }

  /// The array member `key` as readers of its elements, each of which must be an object,
  /// with contexts `key[0]`, `key[1]`…; empty when it is absent or `null`.
  public func objects(_ key: String) throws(JSONReadError) -> [JSONObjectReader] {
    var readers: [JSONObjectReader] = []
    for (position, element) in try array(key).enumerated() {
      readers.append(try JSONObjectReader(element, context: path(key) + "[\(position)]"))
    }
    return readers
  }

  /// The required object member `key`, as a reader with context `key`.
  public func object(_ key: String) throws(JSONReadError) -> JSONObjectReader {
    guard let reader = try optionalObject(key) else { throw error("missing required key '\(key)'") }
    return reader
  }

  /// The object member `key` as a reader with context `key`, or nil when it is absent
  /// or `null`.
  public func optionalObject(_ key: String) throws(JSONReadError) -> JSONObjectReader? {
    guard let value = presentValue(key) else { return nil }
    guard case .object = value else { throw wrongType(key, expected: "an object", found: value) }
    return try JSONObjectReader(value, context: path(key))
  }

  /// The object member `key` whose members are all strings (a `userInfo`); empty when it
  /// is absent or `null`.
  public func stringMap(_ key: String) throws(JSONReadError) -> [String: String] {
    guard let reader = try optionalObject(key) else { return [:] }
    var map: [String: String] = [:]
    for field in reader.fields {
      guard case .string(let s) = field.value else {
        throw reader.wrongType(field.key, expected: "a string", found: field.value)
      }
      map[field.key] = s
    }
    return map
  }

  /// The array member `key` whose elements are arrays of strings; empty when it is absent
  /// or `null`.
  public func stringArrays(_ key: String) throws(JSONReadError) -> [[String]] {
    var result: [[String]] = []
    for (i, element) in try array(key).enumerated() {
      guard case .array(let inner) = element else {
        throw JSONReadError(
          context: path(key) + "[\(i)]", message: "expected an array, found \(element.kindDescription)")
      }
      var names: [String] = []
      for (j, name) in inner.enumerated() {
        guard case .string(let s) = name else {
          throw JSONReadError(
            context: path(key) + "[\(i)][\(j)]", message: "expected a string, found \(name.kindDescription)")
        }
        names.append(s)
      }
      result.append(names)
    }
    return result
  }

  // MARK: - Unknown keys

  /// Throws when the object has a key outside `allowed`, naming the first such key in
  /// written order and suggesting the allowed key it is most likely a typo of.
  ///
  /// - Throws: ``JSONReadError`` such as
  ///   `entities[0].attributes[2]: unknown key 'optinal' (did you mean 'optional'?)`.
  public func rejectUnknownKeys(allowed: Set<String>) throws(JSONReadError) {
    for field in fields where !allowed.contains(field.key) {
      var message = "unknown key '\(field.key)'"
      if let suggestion = Spelling.nearest(to: field.key, among: allowed) {
        message += " (did you mean '\(suggestion)'?)"
      }
      throw error(message)
    }
  }

  // MARK: - Helpers

  /// The member `key` unless it is absent or `null`.
  private func presentValue(_ key: String) -> JSON? {
    guard let value = optionalValue(key), !value.isNull else { return nil }
    return value
  }

  /// The context of the member `key`: `entities[0].attributes` for `attributes`.
  private func path(_ key: String) -> String {
    context.isEmpty ? key : "\(context).\(key)"
  }

  private func error(_ message: String) -> JSONReadError {
    JSONReadError(context: context, message: message)
  }

  private func wrongType(_ key: String, expected: String, found: JSON) -> JSONReadError {
    error("key '\(key)' must be \(expected), found \(found.kindDescription)")
  }
}
