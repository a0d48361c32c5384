import Foundation

/// A `MATCHES` pattern compiled once: the regular expression must match the whole string.
///
/// ICU matches code points, so the pattern and the string are both put in Unicode
/// normal form C first: canonically equivalent strings match alike (`'caf.'` matches
/// `café` with a combining accent, as it matches the precomposed one).
///
/// Sendable by checking, not by the compiler: every stored property is a `let`, and
/// `NSRegularExpression` is immutable once made and documented thread-safe for matching
/// ("NSRegularExpression objects are immutable and thread safe"). swift-corelibs-foundation
/// declares it `Sendable`; not every Apple SDK does, hence `@unchecked`. So one compiled
/// pattern serves every evaluation on every thread.
@usableFromInline
final class RegexMatcher: @unchecked Sendable {
  private let regex: NSRegularExpression
  /// Whether `regex` is the pattern wrapped as `\A(?:pattern)\z`; when wrapping changed
  /// the pattern's meaning (a trailing `(?x)` comment, an open `\Q`), the pattern is
  /// used as written and a match must cover the whole string.
  private let isWrapped: Bool
  private let diacriticInsensitive: Bool

  /// - Returns: `nil` when `pattern` is not a valid ICU regular expression.
  init?(_ pattern: String, options: QueryStringOptions) {
    diacriticInsensitive = options.contains(.diacriticInsensitive)
    let text = Self.normalized(diacriticInsensitive ? StringMatching.fold(pattern, [.diacriticInsensitive]) : pattern)
    let flags: NSRegularExpression.Options = options.contains(.caseInsensitive) ? [.caseInsensitive] : []
    guard let plain = try? NSRegularExpression(pattern: text, options: flags) else { return nil }
    if let wrapped = try? NSRegularExpression(pattern: "\\A(?:" + text + ")\\z", options: flags),
      wrapped.numberOfCaptureGroups == plain.numberOfCaptureGroups
    {
      regex = wrapped
      isWrapped = true
    } else {
      regex = plain
      isWrapped = false
    }
  }

  /// Whether the whole of `value` matches.
  func matches(_ value: String) -> Bool {
    let subject = Self.normalized(diacriticInsensitive ? StringMatching.fold(value, [.diacriticInsensitive]) : value)
    let whole = NSRange(subject.startIndex..<subject.endIndex, in: subject)
    if isWrapped {
      return regex.firstMatch(in: subject, options: [], range: whole) != nil
    }
    guard let match = regex.firstMatch(in: subject, options: [.anchored], range: whole) else { return false }
    return match.range == whole
  }

  /// Normal form C (ASCII is already in it).
  private static func normalized(_ s: String) -> String {
    StringMatching.isASCII(s) ? s : s.precomposedStringWithCanonicalMapping
  }
}
