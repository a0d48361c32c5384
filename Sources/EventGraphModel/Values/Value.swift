import Foundation

/// An attribute value, typed as the model's attribute types are.
///
/// A missing value (Core Data's `nil`) is `Value?.none` at every API: there is no
/// `.null` case, so "no value" can never be confused with a value.
public enum Value: Sendable, Hashable {
  case string(String)
  case int16(Int16)
  case int32(Int32)
  case int64(Int64)
  case double(Double)
  case float(Float)
  /// A decimal number, kept exactly.
  case decimal(Decimal)
  case boolean(Bool)
  /// A point in time, as seconds since 1970-01-01T00:00:00Z.
  case date(Date)
  case binary([UInt8])
  case uuid(UUID)
  /// A URI, kept as the text it was given.
  case uri(String)
  /// A personal value that the store could not open: its subject was erased, or its key is
  /// missing (``SealedValue``).
  case sealed(SealedValue)

  /// The attribute type this value has.
  public var type: AttributeType {
    switch self {
    case .string: .string
    case .int16: .int16
    case .int32: .int32
    case .int64: .int64
    case .double: .double
    case .float: .float
    case .decimal: .decimal
    case .boolean: .boolean
    case .date: .date
    case .binary: .binary
    case .uuid: .uuid
    case .uri: .uri
    case .sealed(let s): s.type
    }
  }

  /// Whether the value is a sealed personal value that was not opened.
  public var isSealed: Bool {
    if case .sealed = self { return true }
    return false
  }

  /// The value as a 64-bit integer, when it is an integer of any width.
  public var integerValue: Int64? {
    switch self {
    case .int16(let v): Int64(v)
    case .int32(let v): Int64(v)
    case .int64(let v): v
    default: nil
    }
  }

  /// The value as a double, when it is a number of any kind.
  public var doubleValue: Double? {
    switch self {
    case .int16(let v): Double(v)
    case .int32(let v): Double(v)
    case .int64(let v): Double(v)
    case .double(let v): v
    case .float(let v): Double(v)
    case .decimal(let v): NSDecimalNumber(decimal: v).doubleValue
    default: nil
    }
  }

  /// The string, when the value is a string.
  public var stringValue: String? {
    if case .string(let s) = self { return s }
    return nil
  }
}

/// The type of an attribute, as named in a model file.
public enum AttributeType: String, Sendable, Hashable, CaseIterable {
  case string, int16, int32, int64, double, float, decimal, boolean, date, binary, uuid, uri

  /// Whether values of this type are numbers (and compare numerically with each other).
  public var isNumeric: Bool {
    switch self {
    case .int16, .int32, .int64, .double, .float, .decimal: true
    default: false
    }
  }

  /// Whether values of this type are integers.
  public var isInteger: Bool { self == .int16 || self == .int32 || self == .int64 }
}
