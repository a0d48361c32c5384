/// A value expression of the query language, as parsed: NSExpression's format-string subset.
///
/// ```swift
/// let e = try QueryExpression(parsing: "uppercase($source.lastName)")
/// print(e)  // uppercase($source.lastName)
/// ```
///
/// Two expressions are equal when they say the same thing: where they were written
/// (the source offsets kept for error messages) takes no part in equality.
struct QueryExpression: Sendable, Hashable, CustomStringConvertible {
  /// What the expression is.
  indirect enum Kind: Sendable, Hashable {
    /// A constant: `'text'`, `12`, `1.5`, `TRUE`, `nil`.
    case literal(QueryLiteral)
    /// A key path from the evaluated object or from a `$variable`: `company.name`,
    /// `employees.@avg.salary`, `$source.phone1`, `$source`.
    case keyPath(QueryKeyPath)
    /// A collection written in braces: `{1, 2, 3}` (right side of `IN` and `BETWEEN`).
    case list([QueryExpression])
    /// `left + right`, `left - right`, `left * right`, `left / right`.
    case arithmetic(ArithmeticOperator, QueryExpression, QueryExpression)
    /// Unary minus: `-salary`.
    case negation(QueryExpression)
    /// A function call: `concat(firstName, ' ', lastName)`.
    case function(QueryFunction, [QueryExpression])
    /// `SUBQUERY(items, $i, $i.price > 250).@count`: the elements of a to-many collection
    /// for which a predicate holds, and a key path from them.
    case subquery(QuerySubquery)
  }

  let kind: Kind
  /// Where the expression starts in the text it was parsed from (UTF-8 offset).
  let sourceOffset: Int?
  /// Height of the tree: 1 for a leaf.
  ///
  /// Bounded by ``QueryPredicate/maximumDepth`` in parsed trees, so that printing,
  /// checking and evaluating never recurse deeper than that.
  let depth: Int

  /// An expression built in code.
  init(_ kind: Kind) { self.init(kind, at: nil) }

  init(_ kind: Kind, at sourceOffset: Int?) {
    self.kind = kind
    self.sourceOffset = sourceOffset
    switch kind {
    case .literal, .keyPath: depth = 1
    case .list(let items), .function(_, let items): depth = 1 + (items.map(\.depth).max() ?? 0)
    case .arithmetic(_, let l, let r): depth = 1 + max(l.depth, r.depth)
    case .negation(let e): depth = 1 + e.depth
    case .subquery(let s): depth = 1 + max(s.collection.depth, s.predicate.depth)
    }
  }

  static func == (a: Self, b: Self) -> Bool { a.kind == b.kind }
  func hash(into hasher: inout Hasher) { hasher.combine(kind) }

  /// A literal expression.
  static func literal(_ value: QueryLiteral) -> Self { Self(.literal(value)) }
  /// A key path from the evaluated object: `keyPath("company", "name")`.
  static func keyPath(_ names: String...) -> Self {
    Self(.keyPath(QueryKeyPath(variable: nil, components: names.map { .property($0) })))
  }
}

/// Foundation's `SUBQUERY(collection, $variable, predicate)`, then a key path from the
/// elements it keeps (`.@count`, `.name`).
struct QuerySubquery: Sendable, Hashable {
  /// A to-many key path.
  let collection: QueryExpression
  /// The variable bound to each element in `predicate` (without the `$`).
  let variable: String
  let predicate: QueryPredicate
  /// What follows the closing parenthesis; no variable, maybe no components.
  let tail: QueryKeyPath

  init(collection: QueryExpression, variable: String, predicate: QueryPredicate, tail: QueryKeyPath) {
    self.collection = collection
    self.variable = variable
    self.predicate = predicate
    self.tail = tail
  }
}

/// A constant written in a query.
@usableFromInline enum QueryLiteral: Sendable, Hashable {
  /// `nil` or `NULL`: no value.
  case null
  /// `TRUE`, `FALSE`, `YES`, `NO`.
  case boolean(Bool)
  /// An integer: `42`, `-7`, `0x1F`.
  case integer(Int64)
  /// A number with a fraction or exponent: `1.5`, `2e10`.
  case double(Double)
  /// `'text'` or `"text"`.
  case string(String)
}

/// A key path: an optional `$variable` root, then property names and aggregate operators.
struct QueryKeyPath: Sendable, Hashable {
  /// One step of a key path.
  enum Component: Sendable, Hashable {
    /// An attribute or relationship name.
    case property(String)
    /// `@count`, `@sum`, `@avg`, `@min`, `@max`.
    case aggregate(QueryAggregate)
    /// `[FIRST]`, `[LAST]`, `[n]` after an ordered to-many relationship: one element.
    case element(QueryElementIndex)
  }

  /// The `$variable` the path starts from (without the `$`); `nil` for the evaluated object.
  let variable: String?
  let components: [Component]
  /// Where each component starts (UTF-8 offsets), parallel to `components`, when parsed.
  let componentOffsets: [Int]

  init(variable: String?, components: [Component]) {
    self.init(variable: variable, components: components, offsets: [])
  }

  init(variable: String?, components: [Component], offsets: [Int]) {
    self.variable = variable
    self.components = components
    self.componentOffsets = offsets
  }

  func offset(ofComponent i: Int) -> Int? {
    i < componentOffsets.count ? componentOffsets[i] : nil
  }

  static func == (a: Self, b: Self) -> Bool {
    a.variable == b.variable && a.components == b.components
  }
  func hash(into hasher: inout Hasher) {
    hasher.combine(variable)
    hasher.combine(components)
  }
}

/// The collection operators of key paths, Apple's `@count`, `@sum`, `@avg`, `@min`, `@max`.
@usableFromInline enum QueryAggregate: String, Sendable, Hashable, CaseIterable {
  case count, sum, avg, min, max
}

/// Which element of an ordered to-many relationship `[FIRST]`, `[LAST]` or `[n]` picks.
public enum QueryElementIndex: Sendable, Hashable {
  case first
  case last
  /// 0-based, as NSArray's and NSOrderedSet's index.
  case at(Int64)
}

/// The binary arithmetic operators.
@usableFromInline enum ArithmeticOperator: String, Sendable, Hashable, CaseIterable {
  case add = "+"
  case subtract = "-"
  case multiply = "*"
  case divide = "/"

  /// 1 for `+ -`, 2 for `* /`.
  var precedence: Int { self == .add || self == .subtract ? 1 : 2 }
}

/// The functions a query can call.
///
/// Names are case-insensitive in the text.
@usableFromInline enum QueryFunction: String, Sendable, Hashable, CaseIterable {
  case uppercase, lowercase, trim, concat, coalesce, now, uuid, length, abs
  /// A string's length in UTF-16 code units (NSString's `length`), binary data's in bytes:
  /// what a key path's `.length` answers, as Foundation does.
  case utf16length
  /// A date from an ISO 8601 string, or from a number of seconds since 2001-01-01T00:00:00Z
  /// (Foundation's reference date): what `CAST(x, 'NSDate')` gives.
  case date
  /// A number (a double) from a string or a number: what `CAST(x, 'NSNumber')` gives.
  case number

  /// How many arguments the function takes: an exact count, or at least one.
  var arity: (minimum: Int, maximum: Int?) {
    switch self {
    case .now, .uuid: (0, 0)
    case .uppercase, .lowercase, .trim, .length, .abs, .utf16length, .date, .number: (1, 1)
    case .concat, .coalesce: (1, nil)
    }
  }
}
