import Foundation

/// The rules an attribute's values keep beyond their type, as Core Data's attribute
/// validation has them: a range of values, a range of lengths, a regular expression.
///
/// Checked on every object a commit touched, by the store and the upcast alike; a value
/// that breaks one refuses the commit, naming the object, the attribute and the rule.
public struct ValueRules: Sendable, Hashable {
  /// The smallest value allowed, of the attribute's type (numbers and dates).
  public let minValue: Value?
  /// The greatest value allowed.
  public let maxValue: Value?
  /// The fewest UTF-16 code units of a string (as `NSString.length` counts), or bytes.
  public let minLength: Int?
  /// The most UTF-16 code units of a string, or bytes.
  public let maxLength: Int?
  /// The ICU regular expression (`NSRegularExpression`'s) the whole string must match.
  public let regularExpression: String?
  /// The compiled expression; not compared, since the pattern says it all.
  private let matcher: RegexMatcher?

  /// Rules for an attribute; `nil` when there are none.
  ///
  /// - Throws: a message saying what cannot hold (the caller names the attribute).
  init?(
    minValue: Value?, maxValue: Value?, minLength: Int?, maxLength: Int?, regularExpression: String?
  ) throws(ValueError) {
    if minValue == nil && maxValue == nil && minLength == nil && maxLength == nil && regularExpression == nil {
      return nil
    }
    if let lo = minValue, let hi = maxValue, ValueComparison.order(lo, hi) == .orderedDescending {
      throw ValueError(.invalidRule, "minValue \(lo.displayText) exceeds maxValue \(hi.displayText)")
    }
    for (key, n) in [("minLength", minLength), ("maxLength", maxLength)] {
      if let n, n < 0 { throw ValueError(.invalidRule, "\(key) is negative") }
    }
    if let lo = minLength, let hi = maxLength, lo > hi {
      throw ValueError(.invalidRule, "minLength \(lo) exceeds maxLength \(hi)")
    }
    if let pattern = regularExpression {
      guard let m = RegexMatcher(pattern) else {
        throw ValueError(.invalidRule, "regularExpression '\(pattern)' does not compile")
      }
      matcher = m
    } else {
      matcher = nil
    }
    self.minValue = minValue
    self.maxValue = maxValue
    self.minLength = minLength
    self.maxLength = maxLength
    self.regularExpression = regularExpression
  }

  public static func == (a: Self, b: Self) -> Bool {
    a.minValue == b.minValue && a.maxValue == b.maxValue && a.minLength == b.minLength
      && a.maxLength == b.maxLength && a.regularExpression == b.regularExpression
  }

  public func hash(into h: inout Hasher) {
    h.combine(minValue)
    h.combine(maxValue)
    h.combine(minLength)
    h.combine(maxLength)
    h.combine(regularExpression)
  }

  /// The rule `value` breaks, in words (`200 is above maxValue 150`), or `nil`.
  ///
  /// What a commit's validation says of the value, so a form can check its input before
  /// committing: `attribute.rules?.violation(value)`.
  public func violation(_ value: Value) -> String? { breach(value)?.message }

  /// The rule `value` breaks and the words for it, or `nil`: ``violation(_:)`` with the
  /// rule named, as a commit's `validation` error names it.
  public func breach(_ value: Value) -> (rule: ValidationRule, message: String)? {
    if let lo = minValue, ValueComparison.order(value, lo) == .orderedAscending {
      return (.minValue, "\(value.displayText) is below minValue \(lo.displayText)")
    }
    if let hi = maxValue, ValueComparison.order(value, hi) == .orderedDescending {
      return (.maxValue, "\(value.displayText) is above maxValue \(hi.displayText)")
    }
    if minLength != nil || maxLength != nil, let (n, unit) = Self.length(value) {
      if let lo = minLength, n < lo {
        return (.minLength, "\(Self.shown(value)) has \(n) \(unit), fewer than minLength \(lo)")
      }
      if let hi = maxLength, n > hi {
        return (.maxLength, "\(Self.shown(value)) has \(n) \(unit), more than maxLength \(hi)")
      }
    }
    if let matcher, let pattern = regularExpression, case .string(let s) = value, !matcher.matches(s) {
      return (.regularExpression, "\(Self.shown(value)) does not match regularExpression '\(pattern)'")
    }
    return nil
  }

  /// A string's length as Core Data counts it (UTF-16 code units), or a binary's bytes.
  private static func length(_ value: Value) -> (Int, String)? {
    switch value {
    case .string(let s): (s.utf16.count, "UTF-16 code units")
    case .binary(let b): (b.count, "bytes")
    default: nil
    }
  }

  /// The value as a message shows it: a long string cut short.
  private static func shown(_ value: Value) -> String {
    if case .string(let s) = value, s.count > 40 { return "'\(s.prefix(40))…'" }
    return value.displayText
  }
}
