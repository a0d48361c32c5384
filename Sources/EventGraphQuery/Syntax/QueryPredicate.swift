/// A predicate of the query language, as parsed: NSPredicate's format-string subset.
///
/// ```swift
/// let p = try QueryPredicate(parsing: "phone1 != nil || phone2 != nil")
/// print(p)  // phone1 != nil OR phone2 != nil
/// ```
///
/// `description` prints a canonical form that parses back to an equal tree. Two
/// predicates are equal when they say the same thing; source offsets take no part.
struct QueryPredicate: Sendable, Hashable, CustomStringConvertible {
  /// The deepest tree (and the deepest nesting of parentheses, braces and calls) the
  /// parser accepts.
  ///
  /// The parser itself uses no recursion, but checking, printing and evaluating walk the
  /// tree recursively. At this depth they need at most about 128 KB of stack in a
  /// release build and 384 KB in a debug build, so they run on any thread, even one
  /// with the 512 KB stack of a secondary thread on Darwin.
  static let maximumDepth = 100

  /// What the predicate is.
  indirect enum Kind: Sendable, Hashable {
    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    case constant(Bool)
    /// `NOT p`, `!p`.
    case not(QueryPredicate)
    /// `p AND q AND …` (two or more operands).
    case and([QueryPredicate])
    /// `p OR q OR …` (two or more operands).
    case or([QueryPredicate])
    /// `left op right`, possibly quantified: `ANY employees.salary > 1000`.
    case comparison(QueryComparison)
  }

  let kind: Kind
  /// Where the predicate starts in the text it was parsed from (UTF-8 offset).
  let sourceOffset: Int?
  /// Height of the tree: a constant is 1, a comparison of two leaves 2.
  let depth: Int

  /// A predicate built in code.
  init(_ kind: Kind) { self.init(kind, at: nil) }

  init(_ kind: Kind, at sourceOffset: Int?) {
    self.kind = kind
    self.sourceOffset = sourceOffset
    switch kind {
    case .constant: depth = 1
    case .not(let p): depth = 1 + p.depth
    case .and(let ps), .or(let ps): depth = 1 + (ps.map(\.depth).max() ?? 0)
    case .comparison(let c): depth = 1 + max(c.left.depth, c.right.depth)
    }
  }

  static func == (a: Self, b: Self) -> Bool { a.kind == b.kind }
  func hash(into hasher: inout Hasher) { hasher.combine(kind) }
}

/// A comparison: `left op[options] right`, with an optional quantifier on the left.
struct QueryComparison: Sendable, Hashable {
  /// `ANY`, `ALL` or `NONE` over a to-many left side; `nil` for a plain comparison.
  let quantifier: QueryQuantifier?
  let left: QueryExpression
  let op: QueryOperator
  /// `[c]`, `[d]`, `[cd]`.
  let options: QueryStringOptions
  /// The right side; for `BETWEEN` a two-element ``QueryExpression/Kind/list(_:)``.
  let right: QueryExpression
  /// Where the operator is in the text (UTF-8 offset), for type errors.
  let operatorOffset: Int?

  /// A comparison built in code: `QueryComparison(.keyPath("age"), .greaterOrEqual, .literal(.integer(18)))`.
  init(
    _ left: QueryExpression, _ op: QueryOperator, options: QueryStringOptions = [], _ right: QueryExpression,
    quantifier: QueryQuantifier? = nil
  ) {
    self.init(quantifier, left, op, options: options, right, operatorOffset: nil)
  }

  init(
    _ quantifier: QueryQuantifier?, _ left: QueryExpression, _ op: QueryOperator,
    options: QueryStringOptions, _ right: QueryExpression, operatorOffset: Int?
  ) {
    self.quantifier = quantifier
    self.left = left
    self.op = op
    self.options = options
    self.right = right
    self.operatorOffset = operatorOffset
  }

  static func == (a: Self, b: Self) -> Bool {
    a.quantifier == b.quantifier && a.left == b.left && a.op == b.op && a.options == b.options
      && a.right == b.right
  }
  func hash(into hasher: inout Hasher) {
    hasher.combine(quantifier)
    hasher.combine(left)
    hasher.combine(op)
    hasher.combine(options.rawValue)
    hasher.combine(right)
  }
}

/// How a comparison with a to-many left side combines the comparisons of its elements.
///
/// (`anyOf` rather than `any`, so that `.noneOf` is never read as `Optional.none`.)
@usableFromInline enum QueryQuantifier: String, Sendable, Hashable, CaseIterable {
  /// True when some element matches (`SOME` is a synonym); false for an empty collection.
  case anyOf = "ANY"
  /// True when every element matches; true for an empty collection.
  case allOf = "ALL"
  /// True when no element matches; true for an empty collection.
  case noneOf = "NONE"
}

/// The comparison operators.
///
/// The raw value is the canonical spelling.
@usableFromInline enum QueryOperator: String, Sendable, Hashable, CaseIterable {
  case equal = "=="
  case notEqual = "!="
  case less = "<"
  case lessOrEqual = "<="
  case greater = ">"
  case greaterOrEqual = ">="
  case beginsWith = "BEGINSWITH"
  case endsWith = "ENDSWITH"
  case contains = "CONTAINS"
  case like = "LIKE"
  case matches = "MATCHES"
  case `in` = "IN"
  case between = "BETWEEN"

  /// Whether the operator works on strings only.
  var isStringOperator: Bool {
    switch self {
    case .beginsWith, .endsWith, .contains, .like, .matches: true
    default: false
    }
  }

  /// Whether the operator orders its operands.
  var isOrdering: Bool {
    switch self {
    case .less, .lessOrEqual, .greater, .greaterOrEqual, .between: true
    default: false
    }
  }
}

/// The `[c]` and `[d]` modifiers of string comparisons.
@usableFromInline struct QueryStringOptions: OptionSet, Sendable, Hashable {
  @usableFromInline let rawValue: UInt8
  @usableFromInline init(rawValue: UInt8) { self.rawValue = rawValue }

  /// `[c]`: compare without regard to case (full Unicode case folding: `ß` matches `SS`).
  @usableFromInline static let caseInsensitive = QueryStringOptions(rawValue: 1)
  /// `[d]`: compare without regard to diacritics (`é` matches `e`).
  @usableFromInline static let diacriticInsensitive = QueryStringOptions(rawValue: 2)

  /// `[c]`, `[d]`, `[cd]` or the empty string.
  var modifierText: String {
    if isEmpty { return "" }
    return "[" + (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "") + "]"
  }
}
