import Foundation

/// Equality and order of values as predicates see them (NSPredicate's rules).
///
/// Numbers compare by value across int16/int32/int64/float/double/decimal: integers
/// with each other exactly, an integer with a double exactly (no rounding through
/// `Double(Int64)`), a decimal with an integer exactly, a decimal with a double through
/// the double's shortest decimal text (`0.1` is the decimal 0.1). Strings compare as
/// Swift strings do (canonical equivalence: `"é"` written precomposed or decomposed is
/// one string); a string and a URI compare by their text. Dates compare as dates. NaN
/// is unordered and unequal to everything.
///
/// An attribute's `minValue` and `maxValue` rules (``ValueRules``) and the query language
/// order values by it alike, so a rule and a predicate never disagree on a bound.
@usableFromInline
package enum ValueComparison {
  /// `a == b` under the numeric promotion rules; values of unrelated types are unequal.
  @usableFromInline
  package static func equal(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.string(let x), .string(let y)), (.string(let x), .uri(let y)), (.uri(let x), .string(let y)),
      (.uri(let x), .uri(let y)):
      return x == y
    case (.boolean(let x), .boolean(let y)): return x == y
    case (.date(let x), .date(let y)): return x == y
    case (.uuid(let x), .uuid(let y)): return x == y
    case (.binary(let x), .binary(let y)): return x == y
    default:
      return order(a, b) == .orderedSame
    }
  }

  /// The order of `a` and `b`, or `nil` when they are not ordered (different kinds,
  /// NaN, booleans, UUIDs, binary data).
  @usableFromInline
  package static func order(_ a: Value, _ b: Value) -> ComparisonResult? {
    switch (a, b) {
    case (.string(let x), .string(let y)), (.string(let x), .uri(let y)), (.uri(let x), .string(let y)),
      (.uri(let x), .uri(let y)):
      return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
    case (.date(let x), .date(let y)):
      return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
    default:
      return numericOrder(a, b)
    }
  }

  // MARK: - Numbers

  private static func numericOrder(_ a: Value, _ b: Value) -> ComparisonResult? {
    if let x = a.integerValue {
      if let y = b.integerValue { return compare(x, y) }
      if let y = binaryFloatingValue(b) { return compare(x, y) }
      if case .decimal(let y) = b { return compare(Decimal(x), y) }
      return nil
    }
    if let x = binaryFloatingValue(a) {
      if let y = b.integerValue { return compare(y, x).map(reversed) }
      if let y = binaryFloatingValue(b) {
        return x < y ? .orderedAscending : x == y ? .orderedSame : x > y ? .orderedDescending : nil
      }
      if case .decimal(let y) = b { return decimal(x).flatMap { compare($0, y) } ?? compareInfinite(x) }
      return nil
    }
    if case .decimal(let x) = a {
      if let y = b.integerValue { return compare(x, Decimal(y)) }
      if let y = binaryFloatingValue(b) {
        return decimal(y).flatMap { compare(x, $0) } ?? compareInfinite(y).map(reversed)
      }
      if case .decimal(let y) = b { return compare(x, y) }
    }
    return nil
  }

  private static func binaryFloatingValue(_ v: Value) -> Double? {
    switch v {
    case .double(let d): d
    case .float(let f): Double(f)
    default: nil
    }
  }

  private static func reversed(_ r: ComparisonResult) -> ComparisonResult {
    switch r {
    case .orderedAscending: .orderedDescending
    case .orderedDescending: .orderedAscending
    case .orderedSame: .orderedSame
    }
  }

  private static func compare(_ x: Int64, _ y: Int64) -> ComparisonResult? {
    x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
  }

  private static func compare(_ x: Decimal, _ y: Decimal) -> ComparisonResult? {
    if x.isNaN || y.isNaN { return nil }
    return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
  }

  /// An integer against a double, exactly: `Int64.max` is below `9.223372036854775807e18`
  /// (which is 2^63), though `Double(Int64.max)` equals it.
  static func compare(_ x: Int64, _ y: Double) -> ComparisonResult? {
    if y.isNaN { return nil }
    if y >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
    if y < -9_223_372_036_854_775_808.0 { return .orderedDescending }
    let whole = y.rounded(.down)  // now exactly representable as Int64
    let w = Int64(whole)
    if x < w { return .orderedAscending }
    if x > w { return .orderedDescending }
    return whole == y ? .orderedSame : .orderedAscending
  }

  /// A finite double as the decimal its shortest text spells; `nil` for NaN and infinities.
  package static func decimal(_ d: Double) -> Decimal? {
    guard d.isFinite else { return nil }
    if d == d.rounded(.towardZero), Swift.abs(d) < 1e15 { return Decimal(Int64(d)) }
    return Decimal(string: d.description, locale: Locale(identifier: "en_US_POSIX"))
  }

  /// An infinite double against any decimal (decimals are finite).
  private static func compareInfinite(_ d: Double) -> ComparisonResult? {
    d == .infinity ? .orderedDescending : d == -.infinity ? .orderedAscending : nil
  }
}
