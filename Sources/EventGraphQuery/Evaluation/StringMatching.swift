import EventGraphModel
import Foundation

/// The string operators: folding for `[c]` and `[d]`, `BEGINSWITH`, `ENDSWITH`,
/// `CONTAINS`, `LIKE`.
///
/// Everything works on `Character`s, so canonically equivalent texts match and a
/// pattern never matches half of a character (`"cafe\u{301}"` does not begin with
/// `"cafe"`: its fourth character is `é`). `[c]` is full Unicode case folding (`ß`
/// matches `SS`), `[d]` removes diacritics (`é` matches `e`), both by Foundation's
/// `folding(options:locale:)` with no locale. Text that is plain ASCII takes a byte path
/// with the same results and no allocation. (The folding and the test for ASCII are
/// ``UnicodeText``'s, which the model's rules and the store's uniqueness keys share.)
@usableFromInline
enum StringMatching {
  /// `s` folded for comparison under `options`.
  @usableFromInline
  static func fold(_ s: String, _ options: QueryStringOptions) -> String {
    if options.isEmpty { return s }
    return UnicodeText.folded(
      s, caseInsensitive: options.contains(.caseInsensitive),
      diacriticInsensitive: options.contains(.diacriticInsensitive))
  }

  /// `BEGINSWITH`, `ENDSWITH` or `CONTAINS` on strings already folded.
  static func test(_ op: QueryOperator, _ value: String, _ pattern: String) -> Bool {
    switch op {
    case .beginsWith: value.hasPrefix(pattern)
    case .endsWith: value.hasSuffix(pattern)
    case .contains: pattern.isEmpty || value.firstRange(of: pattern) != nil
    default: false
    }
  }

  /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS` or `==` on ASCII text.
  ///
  /// `pattern` is already folded; `value` is folded here byte by byte when `lowercase`
  /// is set. A match may not split a `"\r\n"` pair, as it would split a `Character`.
  @usableFromInline
  static func testASCII(_ op: QueryOperator, _ value: String, _ pattern: [UInt8], lowercase: Bool) -> Bool {
    if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
      let bytes = value.utf8.span  // read in place
      return testASCII(op, count: bytes.count, pattern, lowercase) { bytes[$0] }
    }
    let bytes = Array(value.utf8)
    return testASCII(op, count: bytes.count, pattern, lowercase) { bytes[$0] }
  }

  @inline(__always)
  private static func testASCII(
    _ op: QueryOperator, count n: Int, _ pattern: [UInt8], _ lowercase: Bool, _ byte: (Int) -> UInt8
  ) -> Bool {
    let m = pattern.count
    guard m <= n else { return false }
    func matchesAt(_ start: Int) -> Bool {
      var k = 0
      while k < m {
        var b = byte(start &+ k)
        if lowercase && b &- 0x41 < 26 { b |= 0x20 }
        guard b == pattern[k] else { return false }
        k &+= 1
      }
      // Not inside a CR LF pair at either end.
      // (An empty pattern may match at the very end, where there is no byte to look at.)
      if start > 0, start < n, byte(start &- 1) == 0x0D, byte(start) == 0x0A { return false }
      if m > 0, start &+ m < n, byte(start &+ m &- 1) == 0x0D, byte(start &+ m) == 0x0A { return false }
      return true
    }
    switch op {
    case .equal: return n == m && matchesAt(0)
    case .beginsWith: return matchesAt(0)
    case .endsWith: return matchesAt(n &- m)
    case .contains:
      var start = 0
      while start &+ m <= n {
        if matchesAt(start) { return true }
        start &+= 1
      }
      return false
    default:
      return false
    }
  }
}

/// A `LIKE` pattern prepared once, with a byte path for ASCII text.
@usableFromInline
final class LikeMatcher: Sendable {
  private let pattern: LikePattern<Character>
  private let asciiPattern: LikePattern<UInt8>?
  private let options: QueryStringOptions

  init(_ pattern: String, options: QueryStringOptions) {
    self.options = options
    let folded = StringMatching.fold(pattern, options)
    self.pattern = LikePattern(folded)
    asciiPattern =
      UnicodeText.isASCII(folded) && !folded.utf8.contains(0x0D) ? LikePattern(ascii: Array(folded.utf8)) : nil
  }

  @usableFromInline
  func matches(_ value: String) -> Bool {
    // The byte path when no CR LF pair makes two bytes one character.
    if let asciiPattern, UnicodeText.isASCII(value), !value.utf8.contains(0x0D) {
      let lower = options.contains(.caseInsensitive)
      return asciiPattern.matches(value.utf8.map { lower && $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 })
    }
    return pattern.matches(Array(StringMatching.fold(value, options)))
  }
}

/// A `LIKE` pattern: `*` matches any run of characters, `?` one character, `\` makes the
/// next character literal; the pattern must match the whole string.
@usableFromInline
struct LikePattern<Element: Equatable & Sendable>: Sendable {
  @usableFromInline
  enum Piece: Sendable {
    case anyRun
    case one
    case literal(Element)
  }

  let pieces: [Piece]

  init(_ pattern: [Element], star: Element, question: Element, backslash: Element) {
    var pieces: [Piece] = []
    var escaped = false
    for e in pattern {
      if escaped {
        pieces.append(.literal(e))
        escaped = false
      } else if e == backslash {
        escaped = true
      } else if e == star {
        if case .anyRun? = pieces.last { continue }
        pieces.append(.anyRun)
      } else if e == question {
        pieces.append(.one)
      } else {
        pieces.append(.literal(e))
      }
    }
    if escaped { pieces.append(.literal(backslash)) }
    self.pieces = pieces
  }

  /// Whether the whole of `text` matches: greedy, backtracking only to the last `*`,
  /// so time is at most proportional to `text.count * pieces.count`.
  func matches(_ text: [Element]) -> Bool {
    var t = 0
    var p = 0
    var starPiece = -1
    var starText = 0
    while t < text.count {
      if p < pieces.count {
        switch pieces[p] {
        case .anyRun:
          starPiece = p
          starText = t
          p += 1
          continue
        case .one:
          t += 1
          p += 1
          continue
        case .literal(let e) where e == text[t]:
          t += 1
          p += 1
          continue
        case .literal:
          break
        }
      }
      guard starPiece >= 0 else { return false }
      p = starPiece + 1
      starText += 1
      t = starText
    }
    while p < pieces.count, case .anyRun = pieces[p] { p += 1 }
    return p == pieces.count
  }
}

extension LikePattern where Element == Character {
  init(_ pattern: String) {
    self.init(Array(pattern), star: "*", question: "?", backslash: "\\")
  }
}

extension LikePattern where Element == UInt8 {
  init(ascii pattern: [UInt8]) {
    self.init(pattern, star: UInt8(ascii: "*"), question: UInt8(ascii: "?"), backslash: UInt8(ascii: "\\"))
  }
}
