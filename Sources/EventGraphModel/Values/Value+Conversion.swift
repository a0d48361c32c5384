internal import EventGraphText
import Foundation

/// A value that does not fit the type it was given to, or a rule or text that makes no value.
public struct ValueError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of fault an error is; compare with the constants (`e.code == .outOfRange`).
  public typealias Code = ErrorCode<ValueError>

  /// What kind of fault this is.
  public let code: Code
  /// What is wrong, in words.
  public let description: String

  init(_ code: Code, _ description: String) {
    self.code = code
    self.description = description
  }
}

extension ErrorCode where Domain == ValueError {
  /// A value of another type than the one asked for, that does not convert to it.
  public static var wrongType: Self { Self("wrongType") }
  /// A number outside the range of the type asked for (`70000` for an int16).
  public static var outOfRange: Self { Self("outOfRange") }
  /// A double or float that is not finite (infinity, NaN), which no public format writes.
  public static var notFinite: Self { Self("notFinite") }
  /// Text that is not the form of its type: an ISO 8601 date, base64, a UUID, a decimal.
  public static var invalidText: Self { Self("invalidText") }
  /// Value rules that cannot hold together: a minimum above the maximum, a negative
  /// length, a regular expression that does not compile.
  public static var invalidRule: Self { Self("invalidRule") }
}

extension Value {
  /// The value converted to `type` without losing information.
  ///
  /// Integers convert to any integer type they fit and to every number type; a double
  /// converts to an integer type only when it is integral and in range. Nothing else
  /// converts: a string is never silently read as a number.
  ///
  /// A number that overflows the type (`1e50` for a float) is refused, and so is a double
  /// or float that is not finite (infinity and NaN, which no public format can write).
  ///
  /// - Throws: ``ValueError`` saying what did not fit.
  public func converted(to type: AttributeType) throws(ValueError) -> Value {
    if self.type == type {
      guard isFinite else { throw ValueError(.notFinite, "\(displayText) is not a finite \(type.rawValue)") }
      return self
    }
    guard isFinite else { throw ValueError(.notFinite, "\(displayText) does not fit \(type.rawValue)") }
    switch (self, type) {
    case (_, .int16), (_, .int32), (_, .int64):
      guard let n = exactInteger else {
        throw ValueError(.wrongType, "expected \(type.rawValue), got \(self.type.rawValue) \(self.displayText)")
      }
      switch type {
      case .int16:
        guard let v = Int16(exactly: n) else { throw ValueError(.outOfRange, "\(n) does not fit int16") }
        return .int16(v)
      case .int32:
        guard let v = Int32(exactly: n) else { throw ValueError(.outOfRange, "\(n) does not fit int32") }
        return .int32(v)
      default: return .int64(n)
      }
    case (_, .double):
      if let d = doubleValue { return .double(d) }
    case (_, .float):
      if let d = doubleValue {
        let f = Float(d)
        guard f.isFinite else { throw ValueError(.outOfRange, "\(displayText) does not fit float") }
        return .float(f)
      }
    case (_, .decimal):
      if let n = integerValue { return .decimal(Decimal(n)) }
      if let d = binaryFloatingValue {
        // Decimal's exponent stops near 1e165; beyond it the conversion gives NaN.
        let v = Decimal(d)
        guard !v.isNaN, v.isFinite else { throw ValueError(.outOfRange, "\(displayText) does not fit decimal") }
        return .decimal(v)
      }
    default:
      break
    }
    throw ValueError(.wrongType, "expected \(type.rawValue), got \(self.type.rawValue) \(self.displayText)")
  }

  /// Whether the value is not a double or float infinity or NaN (nor a decimal NaN).
  ///
  /// The store keeps only finite values (no public format can write the others): a set or
  /// an insert of one is refused.
  public var isFinite: Bool {
    switch self {
    case .double(let d): d.isFinite
    case .float(let f): f.isFinite
    case .decimal(let d): !d.isNaN
    default: true
    }
  }

  private var binaryFloatingValue: Double? {
    switch self {
    case .double(let d): d
    case .float(let f): Double(f)
    default: nil
    }
  }

  /// The integer this value is exactly, if any (an integral double counts).
  private var exactInteger: Int64? {
    if let n = integerValue { return n }
    switch self {
    case .double(let d): return Int64(exactly: d)
    case .float(let f): return Int64(exactly: f)
    case .decimal(let d):
      let n = NSDecimalNumber(decimal: d)
      return Decimal(n.int64Value) == d ? n.int64Value : nil
    default: return nil
    }
  }

  /// A short human-readable rendering of the value, for messages and `show`.
  public var displayText: String {
    switch self {
    case .string(let s): "'\(s)'"
    case .int16(let v): "\(v)"
    case .int32(let v): "\(v)"
    case .int64(let v): "\(v)"
    case .double(let v): "\(v)"
    case .float(let v): "\(v)"
    case .decimal(let v): "\(v)"
    case .boolean(let v): v ? "true" : "false"
    case .date(let d): ISO8601.format(d)
    case .binary(let b): "<\(b.count) bytes>"
    case .uuid(let u): u.uuidString
    case .sealed(let s): s.state == .erased ? "<erased>" : "<locked>"
    case .uri(let s): s
    }
  }
}
