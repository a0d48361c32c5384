import EventGraphModel
import Foundation

/// A comparison whose right side is a constant, prepared when the predicate is compiled:
/// string patterns folded once, `LIKE` and `MATCHES` patterns compiled once, numbers
/// converted to the left side's kind where that makes the comparison exact.
@usableFromInline
enum ConstantTest: Sendable {
  /// `== nil` (true) or `!= nil` (false).
  case isNil(Bool)
  /// `==` (or `!=` when negated) a non-nil constant, without string options.
  case equal(Value, negated: Bool)
  /// `<`, `<=`, `>`, `>=` a non-nil constant, without string options.
  case order(QueryOperator, Value)
  /// A string operator, or a comparison with `[c]`/`[d]`, against a string constant.
  case text(QueryOperator, TextPattern)
  case like(LikeMatcher)
  case regex(RegexMatcher)
  /// `IN {constants}`; strings already folded under the options.
  case member([Value?], QueryStringOptions)
  case between(Value, Value, QueryStringOptions)
  /// Always this answer (a string operator against nil, an ordering against nil).
  case always(Bool)

  /// Whether `value op constant` holds.
  @usableFromInline
  func matches(_ value: Value?) -> Bool {
    switch self {
    case .isNil(let isNil):
      return (value == nil) == isNil
    case .equal(let constant, let negated):
      guard let value else { return negated }
      return ValueComparison.equal(value, constant) != negated
    case .order(let op, let constant):
      guard let value, let order = ValueComparison.order(value, constant) else { return false }
      return Comparison.satisfies(order, op)
    case .text(let op, let pattern):
      guard let text = value?.text else { return op == .notEqual && value == nil }
      return pattern.test(op, text)
    case .like(let matcher):
      guard let text = value?.text else { return false }
      return matcher.matches(text)
    case .regex(let matcher):
      guard let text = value?.text else { return false }
      return matcher.matches(text)
    case .member(let items, let options):
      guard !options.isEmpty, let text = value?.text else { return Comparison.isMember(value, of: items, []) }
      return Comparison.isMember(.string(StringMatching.fold(text, options)), of: items, [])
    case .between(let low, let high, let options):
      return Comparison.isBetween(value, low, high, options)
    case .always(let answer):
      return answer
    }
  }
}

/// A string constant folded once, with its bytes when it is plain ASCII.
@usableFromInline
final class TextPattern: Sendable {
  let folded: String
  let ascii: [UInt8]?
  let options: QueryStringOptions

  init(_ text: String, options: QueryStringOptions) {
    self.options = options
    folded = StringMatching.fold(text, options)
    ascii = UnicodeText.isASCII(folded) ? Array(folded.utf8) : nil
  }

  /// `value op pattern` for `==`, `!=`, orderings, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`.
  @usableFromInline
  func test(_ op: QueryOperator, _ value: String) -> Bool {
    switch op {
    case .equal, .beginsWith, .endsWith, .contains:
      if let ascii, UnicodeText.isASCII(value) {
        return StringMatching.testASCII(op, value, ascii, lowercase: options.contains(.caseInsensitive))
      }
      let v = StringMatching.fold(value, options)
      return op == .equal ? v == folded : StringMatching.test(op, v, folded)
    case .notEqual:
      return !test(.equal, value)
    case .less, .lessOrEqual, .greater, .greaterOrEqual:
      let v = StringMatching.fold(value, options)
      let order: ComparisonResult = v < folded ? .orderedAscending : v == folded ? .orderedSame : .orderedDescending
      return Comparison.satisfies(order, op)
    default:
      return false
    }
  }
}
