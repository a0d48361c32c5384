import EventGraphModel
internal import EventGraphText
import Foundation

/// The built-in functions, on computed arguments.
///
/// | function | arguments | result |
/// |---|---|---|
/// | `uppercase(s)`, `lowercase(s)`, `trim(s)` | a string | a string; nil for nil |
/// | `concat(a, b, …)` | any values | the texts joined; nil arguments count as `''` |
/// | `coalesce(a, b, …)` | values of one kind | the first that is not nil |
/// | `now()` | — | the current date |
/// | `uuid()` | — | a new random UUID |
/// | `length(x)` | a string or binary | characters or bytes, `int64`; nil for nil |
/// | `utf16length(x)` | a string or binary | UTF-16 code units (NSString's `length`) or bytes; nil for nil |
/// | `date(x)` | an ISO 8601 string, or seconds since 2001-01-01 | a date; nil for nil or text that is no date |
/// | `number(x)` | a string or a number | a double; nil for nil or text that is no number |
/// | `abs(x)` | a number | its magnitude (integers give `int64`) |
@usableFromInline
enum Functions {
  @usableFromInline
  static func call(_ f: QueryFunction, _ arguments: [Value?], offset: Int?) throws(QueryError) -> Value? {
    let first = arguments.first ?? nil
    switch f {
    case .uppercase:
      return first?.text.map { .string($0.uppercased()) }
    case .lowercase:
      return first?.text.map { .string($0.lowercased()) }
    case .trim:
      return first?.text.map { .string($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    case .concat:
      var result = ""
      for argument in arguments {
        if let argument { result += argument.plainText }
      }
      return .string(result)
    case .coalesce:
      return arguments.first { $0 != nil } ?? nil
    case .now:
      return .date(Date())
    case .uuid:
      return .uuid(UUID())
    case .length:
      switch first {
      case .string(let s)?, .uri(let s)?: return .int64(Int64(s.count))
      case .binary(let b)?: return .int64(Int64(b.count))
      default: return nil
      }
    case .utf16length:
      switch first {
      case .string(let s)?, .uri(let s)?: return .int64(Int64(s.utf16.count))
      case .binary(let b)?: return .int64(Int64(b.count))
      default: return nil
      }
    case .date:
      switch first {
      case .string(let s)?, .uri(let s)?: return ISO8601.parse(s).map(Value.date)
      case .date?: return first
      default: return first?.doubleValue.map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
      }
    case .number:
      switch first {
      case .string(let s)?, .uri(let s)?: return Double(s.trimmingCharacters(in: .whitespaces)).map(Value.double)
      default: return first?.doubleValue.map(Value.double)
      }
    case .abs:
      guard let v = first else { return nil }
      if let n = v.integerValue {
        guard n != .min else { throw QueryError(.overflow, "abs(\(n)) does not fit 64 bits", offset: offset) }
        return .int64(Swift.abs(n))
      }
      switch v {
      case .decimal(let d): return .decimal(d < 0 ? -d : d)
      default: return v.doubleValue.map { .double(Swift.abs($0)) }
      }
    }
  }
}

extension Value {
  /// The value as `concat` writes it: strings as they are, dates in ISO 8601.
  var plainText: String {
    switch self {
    case .string(let s), .uri(let s): s
    case .date(let d): ISO8601.format(d)
    default: displayText
    }
  }
}
