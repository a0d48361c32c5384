import Foundation

/// A regular expression compiled once that must match the whole string: the query
/// language's `MATCHES` and an attribute's `regularExpression` rule (``ValueRules``).
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
package final class RegexMatcher: @unchecked Sendable {
  private let regex: NSRegularExpression
  /// Whether `regex` is the pattern wrapped as `\A(?:pattern)\z`; when wrapping changed
  /// the pattern's meaning (a trailing `(?x)` comment, an open `\Q`), the pattern is
  /// used as written and a match must cover the whole string.
  private let isWrapped: Bool
  private let diacriticInsensitive: Bool

  /// Compiles `pattern`, to match case-insensitively or with diacritics removed (`[c]`,
  /// `[d]`) when asked.
  ///
  /// - Returns: `nil` when `pattern` is not a valid ICU regular expression.
  package init?(_ pattern: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) {
    self.diacriticInsensitive = diacriticInsensitive
    let text = Self.normalized(diacriticInsensitive ? Self.withoutDiacritics(pattern) : pattern)
    let flags: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
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
  package func matches(_ value: String) -> Bool {
    let subject = Self.normalized(diacriticInsensitive ? Self.withoutDiacritics(value) : value)
    let whole = NSRange(subject.startIndex..<subject.endIndex, in: subject)
    if isWrapped {
      return regex.firstMatch(in: subject, options: [], range: whole) != nil
    }
    guard let match = regex.firstMatch(in: subject, options: [.anchored], range: whole) else { return false }
    return match.range == whole
  }

  /// Normal form C (ASCII is already in it).
  private static func normalized(_ s: String) -> String { UnicodeText.precomposed(s) }

  private static func withoutDiacritics(_ s: String) -> String {
    UnicodeText.folded(s, caseInsensitive: false, diacriticInsensitive: true)
  }
}
