import Foundation

/// The forms in which strings that read alike compare alike: plain ASCII, Unicode normal
/// form C, and text folded for case or diacritics.
///
/// One home for three users that must agree: an attribute's `regularExpression` rule
/// (``ValueRules``), the query language's string operators, and the store's uniqueness
/// keys, which all treat canonically equivalent strings (`é` precomposed or written with a
/// combining accent) as one.
package enum UnicodeText {
  /// Whether the string is all ASCII, so that its bytes are its characters (but for
  /// `"\r\n"`, one `Character` of two bytes, which the byte paths check for).
  @inlinable
  package static func isASCII(_ s: String) -> Bool {
    if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
      // The string knows when it is ASCII; otherwise a scan of its bytes in place.
      if s.utf8Span.isKnownASCII { return true }
      let bytes = s.utf8.span
      for i in bytes.indices where bytes[i] >= 0x80 { return false }
      return true
    }
    return s.utf8.allSatisfy { $0 < 0x80 }
  }

  /// The string in normal form C (ASCII is already in it).
  package static func precomposed(_ s: String) -> String {
    isASCII(s) ? s : s.precomposedStringWithCanonicalMapping
  }

  /// The string folded for comparison: full Unicode case folding (`ß` matches `SS`),
  /// diacritics removed (`é` matches `e`), by Foundation's `folding(options:locale:)` with
  /// no locale; plain ASCII is folded by lowercasing, with the same result.
  @inlinable
  package static func folded(_ s: String, caseInsensitive: Bool, diacriticInsensitive: Bool) -> String {
    if !caseInsensitive && !diacriticInsensitive { return s }
    if isASCII(s) {
      // ASCII has no diacritics, and its case folding is lowercasing.
      return caseInsensitive ? s.lowercased() : s
    }
    var foundation: String.CompareOptions = []
    if caseInsensitive { foundation.insert(.caseInsensitive) }
    if diacriticInsensitive { foundation.insert(.diacriticInsensitive) }
    return s.folding(options: foundation, locale: nil)
  }
}
