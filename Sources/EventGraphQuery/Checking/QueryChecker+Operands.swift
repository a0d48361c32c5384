import EventGraphModel
import Foundation

extension QueryChecker {
  /// Checks that `left op right` makes sense for the element types.
  ///
  /// - Numbers compare with numbers, strings with strings and URIs, other types with
  ///   their own type; nil with anything.
  /// - `<`, `>`, `BETWEEN` need numbers, strings or dates.
  /// - String operators and the `[c]`/`[d]` options need strings.
  func checkOperands(
    _ left: QueryType.Element, _ right: QueryType.Element, _ op: QueryOperator, _ c: QueryComparison, at offset: Int?
  ) throws(QueryError) {
    let opName = c.op.rawValue
    guard case .attribute(let a) = left, case .attribute(let b) = right else {
      // nil against a value: only the string-only rules can fail.
      let other = left == .null ? right : left
      if case .attribute(let t) = other, !t.isText, op.isStringOperator || !c.options.isEmpty {
        throw stringOnly(opName, c, t, at: offset)
      }
      return
    }
    if op.isStringOperator || !c.options.isEmpty {
      if !a.isText { throw stringOnly(opName, c, a, at: offset) }
      if !b.isText { throw stringOnly(opName, c, b, at: offset) }
      return
    }
    let compatible = (a.isNumeric && b.isNumeric) || (a.isText && b.isText) || a == b
    guard compatible else {
      throw error(
        .typeMismatch, "cannot compare \(quote(c.left)) (\(a.rawValue)) with \(quote(c.right)) (\(b.rawValue))",
        at: offset)
    }
    if op.isOrdering && !a.isOrdered {
      throw error(
        .typeMismatch, "\(opName) needs numbers, strings or dates; \(a.rawValue) values are not ordered", at: offset)
    }
  }

  private func stringOnly(_ opName: String, _ c: QueryComparison, _ t: AttributeType, at offset: Int?) -> QueryError {
    let what = c.op.isStringOperator ? "\(opName) compares" : "the options \(c.options.modifierText) apply to"
    return error(.typeMismatch, "\(what) strings, not \(t.rawValue) values", at: offset)
  }

  /// The prepared test for `left op constant`.
  func constantTest(_ c: QueryComparison, _ constant: Value?, leftElement: QueryType.Element) throws(QueryError)
    -> ConstantTest
  {
    let options = c.options
    switch c.op {
    case .equal, .notEqual:
      guard let constant else { return .isNil(c.op == .equal) }
      if !options.isEmpty, let text = constant.text { return .text(c.op, TextPattern(text, options: options)) }
      return .equal(adapt(constant, to: leftElement), negated: c.op == .notEqual)
    case .less, .lessOrEqual, .greater, .greaterOrEqual:
      guard let constant else { return .always(false) }
      if !options.isEmpty, let text = constant.text { return .text(c.op, TextPattern(text, options: options)) }
      return .order(c.op, adapt(constant, to: leftElement))
    case .beginsWith, .endsWith, .contains:
      guard let text = constant?.text else { return .always(false) }
      return .text(c.op, TextPattern(text, options: options))
    case .like:
      guard let text = constant?.text else { return .always(false) }
      return .like(LikeMatcher(text, options: options))
    case .matches:
      guard let text = constant?.text else { return .always(false) }
      guard let matcher = RegexMatcher(text, options: options) else {
        throw error(
          .invalidRegularExpression, "\(quote(c.right)) is not a valid regular expression", at: c.right.sourceOffset)
      }
      return .regex(matcher)
    case .in, .between:
      return .always(false)
    }
  }

  /// A numeric constant in the left side's kind when that keeps comparisons exact and
  /// cheap: a double literal against a decimal attribute becomes the decimal it spells.
  func adapt(_ constant: Value, to element: QueryType.Element) -> Value {
    guard case .attribute(.decimal) = element else { return constant }
    return Arithmetic.decimalValue(constant).map { .decimal($0) } ?? constant
  }

  /// The expression checked as one value: not a to-many key path, not an object.
  func singleValue(_ e: QueryExpression) throws(QueryError) -> (ValueCode, QueryType.Element) {
    let checked = try expression(e)
    guard case .value(let code, let element) = checked else { throw notSingleValue(e, checked) }
    return (code, element)
  }

  private func notSingleValue(_ e: QueryExpression, _ checked: Checked) -> QueryError {
    if case .objects(let path, _) = checked, !path.isToMany {
      return error(
        .typeMismatch, "\(quote(e)) is an object, not a value: name one of its attributes", at: e.sourceOffset)
    }
    return toManyError(e)
  }
}
