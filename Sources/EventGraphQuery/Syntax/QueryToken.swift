/// One token of query text, with the UTF-8 range it came from.
struct QueryToken: Sendable, Equatable {
  enum Kind: Sendable, Equatable {
    case end
    /// A name; `escaped` when written `#name` (so it is never a keyword).
    case identifier(String, escaped: Bool)
    case keyword(QueryKeyword)
    /// `$name`, without the `$`.
    case variable(String)
    /// `@name`, without the `@`.
    case aggregate(String)
    /// An integer without sign: decimal, `0x`, `0o` or `0b`.
    case integer(UInt64)
    /// A number with a fraction or an exponent, without sign.
    case double(Double)
    case string(String)
    case symbol(QuerySymbol)
  }

  let kind: Kind
  let start: Int
  let end: Int

  /// How the token reads in "expected X, found Y".
  var displayName: String {
    switch kind {
    case .end: "end of input"
    case .identifier(let name, _): "name '\(name)'"
    case .keyword(let k): k.rawValue
    case .variable(let name): "variable '$\(name)'"
    case .aggregate(let name): "'@\(name)'"
    case .integer(let n): "number \(n)"
    case .double(let d): "number \(d)"
    case .string: "a string"
    case .symbol(let s): "'\(s.rawValue)'"
    }
  }

  /// The comparison operator this token spells, if any.
  var comparisonOperator: QueryOperator? {
    switch kind {
    case .symbol(.equal): .equal
    case .symbol(.notEqual): .notEqual
    case .symbol(.less): .less
    case .symbol(.lessOrEqual): .lessOrEqual
    case .symbol(.greater): .greater
    case .symbol(.greaterOrEqual): .greaterOrEqual
    case .keyword(.beginsWith): .beginsWith
    case .keyword(.endsWith): .endsWith
    case .keyword(.contains): .contains
    case .keyword(.like): .like
    case .keyword(.matches): .matches
    case .keyword(.in): .in
    case .keyword(.between): .between
    default: nil
    }
  }
}

/// Punctuation and operator symbols.
///
/// Synonyms (`=`, `<>`, `=<`, `=>`) lex to one symbol.
enum QuerySymbol: String, Sendable, Equatable {
  case openParen = "("
  case closeParen = ")"
  case openBrace = "{"
  case closeBrace = "}"
  case openBracket = "["
  case closeBracket = "]"
  case comma = ","
  case dot = "."
  case plus = "+"
  case minus = "-"
  case star = "*"
  case slash = "/"
  case equal = "=="
  case notEqual = "!="
  case less = "<"
  case lessOrEqual = "<="
  case greater = ">"
  case greaterOrEqual = ">="
  case and = "&&"
  case or = "||"
  case not = "!"
}

/// The reserved words, matched without regard to case.
///
/// A property named like one is written with a `#` in front: `#in`.
enum QueryKeyword: String, Sendable, CaseIterable {
  case and = "AND"
  case or = "OR"
  case not = "NOT"
  case any = "ANY"
  case some = "SOME"
  case all = "ALL"
  case none = "NONE"
  case `in` = "IN"
  case like = "LIKE"
  case matches = "MATCHES"
  case contains = "CONTAINS"
  case beginsWith = "BEGINSWITH"
  case endsWith = "ENDSWITH"
  case between = "BETWEEN"
  case `nil` = "NIL"
  case null = "NULL"
  case `true` = "TRUE"
  case `false` = "FALSE"
  case yes = "YES"
  case no = "NO"
  case truePredicate = "TRUEPREDICATE"
  case falsePredicate = "FALSEPREDICATE"
  case `self` = "SELF"

  private static let byName: [String: QueryKeyword] = Dictionary(
    uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

  /// The keyword spelled by `name` in any case, if any.
  static func named(_ name: String) -> QueryKeyword? {
    // ASCII only: "ſelf".uppercased() is "SELF", but it is not the keyword.
    guard name.utf8.count <= 15, name.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
    return byName[name.uppercased()]
  }
}
