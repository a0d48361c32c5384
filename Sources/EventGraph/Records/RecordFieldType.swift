import Foundation

/// A relationship value's type, whatever its target: what lets the records' coders make
/// and read a ``Ref`` or an array of them without knowing `Target`.
protocol AnyRefValue {
  static var targetEntityName: String { get }
  static var isArray: Bool { get }
  static func make(_ ids: [ObjectID]) -> Any?
  var ids: [ObjectID] { get }
}

extension Ref: AnyRefValue {
  static var targetEntityName: String { Target.entityName }
  static var isArray: Bool { false }
  static func make(_ ids: [ObjectID]) -> Any? { ids.first.map { Ref($0) } }
  var ids: [ObjectID] { [id] }
}

extension Array: AnyRefValue where Element: AnyRefValue {
  static var targetEntityName: String { Element.targetEntityName }
  static var isArray: Bool { true }
  static func make(_ ids: [ObjectID]) -> Any? { ids.compactMap { Element.make([$0]) as? Element } }
  var ids: [ObjectID] { flatMap(\.ids) }
}

/// The Swift type of a record's property, as far as the store is concerned.
///
/// | Attribute type | Swift types |
/// |---|---|
/// | string | `String` |
/// | int16, int32, int64 | `Int16`, `Int32`, `Int64`, or `Int` for any of them |
/// | double, float, decimal | `Double`, `Float`, `Decimal` |
/// | boolean | `Bool` |
/// | date | `Date` |
/// | binary, transformable | `Data` or `[UInt8]` |
/// | uuid | `UUID` |
/// | uri | `URL` or `String` |
enum RecordFieldType: Hashable {
  case string, int16, int32, int64, int, double, float, decimal, bool, date, data, bytes, uuid, url
  /// A ``Ref`` (or an array of them, `toMany`) to objects of the named entity.
  case ref(target: String, toMany: Bool)

  /// The field type of a Swift type, `nil` for one a record cannot hold.
  static func of(_ t: Any.Type) -> RecordFieldType? {
    if let r = t as? any AnyRefValue.Type { return .ref(target: r.targetEntityName, toMany: r.isArray) }
    let table: [(Any.Type, RecordFieldType)] = [
      (String.self, .string), (Int16.self, .int16), (Int32.self, .int32), (Int64.self, .int64), (Int.self, .int),
      (Double.self, .double), (Float.self, .float), (Decimal.self, .decimal), (Bool.self, .bool),
      (Date.self, .date), (Data.self, .data), ([UInt8].self, .bytes), (UUID.self, .uuid), (URL.self, .url),
    ]
    return table.first { $0.0 == t }?.1
  }

  /// Whether values of this Swift type can be an attribute of type `type`.
  func fits(_ type: AttributeType) -> Bool {
    switch self {
    case .string: type == .string || type == .uri
    case .int16: type == .int16
    case .int32: type == .int32
    case .int64: type == .int64
    case .int: type.isInteger
    case .double: type == .double
    case .float: type == .float
    case .decimal: type == .decimal
    case .bool: type == .boolean
    case .date: type == .date
    case .data, .bytes: type == .binary
    case .uuid: type == .uuid
    case .url: type == .uri
    case .ref: false
    }
  }

  /// The stored value as this Swift type (the type was checked against the attribute).
  func swiftValue(_ v: Value) -> Any? {
    switch (self, v) {
    case (.string, .string(let s)), (.string, .uri(let s)): s
    case (.int16, .int16(let n)): n
    case (.int32, .int32(let n)): n
    case (.int64, .int64(let n)): n
    case (.int, _): v.integerValue.flatMap { Int(exactly: $0) }
    case (.double, .double(let d)): d
    case (.float, .float(let f)): f
    case (.decimal, .decimal(let d)): d
    case (.bool, .boolean(let b)): b
    case (.date, .date(let d)): d
    case (.data, .binary(let b)): Data(b)
    case (.bytes, .binary(let b)): b
    case (.uuid, .uuid(let u)): u
    case (.url, .uri(let s)): URL(string: s)
    default: nil
    }
  }

  /// The Swift value as a value of an attribute of type `type`; `nil` when it is not of
  /// this field type.
  func storedValue(_ x: Any, as type: AttributeType) -> Value? {
    switch self {
    case .string: (x as? String).map { type == .uri ? .uri($0) : .string($0) }
    case .int16: (x as? Int16).map { .int16($0) }
    case .int32: (x as? Int32).map { .int32($0) }
    case .int64: (x as? Int64).map { .int64($0) }
    case .int: (x as? Int).map { .int64(Int64($0)) }
    case .double: (x as? Double).map { .double($0) }
    case .float: (x as? Float).map { .float($0) }
    case .decimal: (x as? Decimal).map { .decimal($0) }
    case .bool: (x as? Bool).map { .boolean($0) }
    case .date: (x as? Date).map { .date($0) }
    case .data: (x as? Data).map { .binary(Array($0)) }
    case .bytes: (x as? [UInt8]).map { .binary($0) }
    case .uuid: (x as? UUID).map { .uuid($0) }
    case .url: (x as? URL).map { .uri($0.absoluteString) }
    case .ref: nil
    }
  }

  /// A value of this type for the probe that reads a record type's properties.
  var placeholder: Any {
    switch self {
    case .string: ""
    case .int16: Int16(0)
    case .int32: Int32(0)
    case .int64: Int64(0)
    case .int: 0
    case .double: 0.0
    case .float: Float(0)
    case .decimal: Decimal(0)
    case .bool: false
    case .date: Date(timeIntervalSince1970: 0)
    case .data: Data()
    case .bytes: [UInt8]()
    case .uuid: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    case .url: URL(fileURLWithPath: "/")
    case .ref: [ObjectID]()
    }
  }
}
