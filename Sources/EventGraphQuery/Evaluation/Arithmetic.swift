import EventGraphModel
import Foundation

/// `+ - * /` and unary minus on computed values.
///
/// - Integers (any width) give an `int64` for `+ - *`, and an overflow is an error.
/// - `/` gives a `double` (`7 / 2` is `3.5`, as NSExpression's `divide:by:`), or a
///   `decimal` when an operand is decimal.
/// - A decimal operand makes the result decimal; otherwise a float or double makes it
///   a double.
/// - `date ± number` is the date moved by that many seconds, `date - date` the seconds
///   between them (a double).
/// - A nil operand gives nil. Division by zero is an error (``QueryError/Kind/divisionByZero``).
@usableFromInline
enum Arithmetic {
  @usableFromInline
  static func apply(_ op: ArithmeticOperator, _ a: Value?, _ b: Value?, offset: Int?) throws(QueryError) -> Value? {
    guard let a, let b else { return nil }
    switch (a, b) {
    case (.date(let x), .date(let y)):
      return op == .subtract ? .double(x.timeIntervalSince(y)) : nil
    case (.date(let x), _):
      guard let s = b.doubleValue, op == .add || op == .subtract else { return nil }
      return .date(x.addingTimeInterval(op == .add ? s : -s))
    case (_, .date(let y)):
      guard let s = a.doubleValue, op == .add else { return nil }
      return .date(y.addingTimeInterval(s))
    default:
      break
    }
    if case .decimal = a { return try decimal(op, a, b, offset: offset) }
    if case .decimal = b { return try decimal(op, a, b, offset: offset) }
    if op != .divide, let x = a.integerValue, let y = b.integerValue {
      let (result, overflow) =
        switch op {
        case .add: x.addingReportingOverflow(y)
        case .subtract: x.subtractingReportingOverflow(y)
        default: x.multipliedReportingOverflow(by: y)
        }
      guard !overflow else {
        throw QueryError(.overflow, "\(x) \(op.rawValue) \(y) does not fit 64 bits", offset: offset)
      }
      return .int64(result)
    }
    guard let x = a.doubleValue, let y = b.doubleValue else { return nil }
    switch op {
    case .add: return .double(x + y)
    case .subtract: return .double(x - y)
    case .multiply: return .double(x * y)
    case .divide:
      guard y != 0 else { throw QueryError(.divisionByZero, "division by zero", offset: offset) }
      return .double(x / y)
    }
  }

  private static func decimal(_ op: ArithmeticOperator, _ a: Value, _ b: Value, offset: Int?) throws(QueryError)
    -> Value?
  {
    guard let x = decimalValue(a), let y = decimalValue(b) else { return nil }
    switch op {
    case .add: return .decimal(x + y)
    case .subtract: return .decimal(x - y)
    case .multiply: return .decimal(x * y)
    case .divide:
      guard !y.isZero else { throw QueryError(.divisionByZero, "division by zero", offset: offset) }
      return .decimal(x / y)
    }
  }

  /// A number as a decimal: integers exactly, doubles through their shortest text.
  static func decimalValue(_ v: Value) -> Decimal? {
    switch v {
    case .decimal(let d): d
    case .int16, .int32, .int64: v.integerValue.map { Decimal($0) }
    case .double(let d): ValueComparison.decimal(d)
    case .float(let f): ValueComparison.decimal(Double(f))
    default: nil
    }
  }

  /// Unary minus: integers give an `int64`, floats and doubles a `double`.
  @usableFromInline
  static func negate(_ v: Value?, offset: Int?) throws(QueryError) -> Value? {
    guard let v else { return nil }
    if let n = v.integerValue {
      guard n != .min else { throw QueryError(.overflow, "-(\(n)) does not fit 64 bits", offset: offset) }
      return .int64(-n)
    }
    switch v {
    case .decimal(let d): return .decimal(-d)
    default: return v.doubleValue.map { .double(-$0) }
    }
  }
}

/// `@sum`, `@avg`, `@min` and `@max` of a collection's values; nil elements are skipped.
///
/// The sum of nothing is zero (of the attribute's kind); the average, minimum and
/// maximum of nothing are nil.
@usableFromInline
enum Aggregates {
  @usableFromInline
  static func apply(_ op: QueryAggregate, to values: [Value?], type: AttributeType, offset: Int?) throws(QueryError)
    -> Value?
  {
    let present = values.compactMap { $0 }
    switch op {
    case .count:
      return .int64(Int64(values.count))
    case .min, .max:
      var best: Value? = nil
      for v in present {
        guard let current = best else {
          best = v
          continue
        }
        if let order = ValueComparison.order(v, current),
          order == (op == .min ? .orderedAscending : .orderedDescending)
        {
          best = v
        }
      }
      return best
    case .sum, .avg:
      // Foundation's collection operators count a nil as 0 in @sum and @avg (the average of
      // 4, nil and 3 is 7/3); an empty collection has no average.
      if op == .avg && values.isEmpty { return nil }
      let total: Value
      if type == .decimal {
        total = .decimal(present.compactMap(Arithmetic.decimalValue).reduce(Decimal(0), +))
      } else if type.isInteger {
        var sum: Int64 = 0
        for v in present {
          let (s, overflow) = sum.addingReportingOverflow(v.integerValue ?? 0)
          guard !overflow else { throw QueryError(.overflow, "@\(op.rawValue) does not fit 64 bits", offset: offset) }
          sum = s
        }
        total = .int64(sum)
      } else {
        total = .double(present.compactMap(\.doubleValue).reduce(0, +))
      }
      guard op == .avg else { return total }
      let count = values.count
      switch total {
      case .decimal(let d): return .decimal(d / Decimal(count))
      case .int64(let n): return .double(Double(n) / Double(count))
      default: return total.doubleValue.map { .double($0 / Double(count)) }
      }
    }
  }
}
