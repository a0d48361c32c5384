/// A query that cannot be parsed, checked or evaluated: what is wrong and where.
///
/// `offset` is the 0-based position in the query text, counted in `Character`s (what
/// `text.index(text.startIndex, offsetBy: offset)` finds), of the token at fault.
///
/// ```swift
/// do {
///   _ = try CompiledPredicate.compile("age >= ", entity: person.id, model: model)
/// } catch {
///   print(error)  // at 7: expected an expression, found end of input
/// }
/// ```
///
/// The kinds are static constants on ``QueryError/Kind``, so new kinds can be added
/// without breaking a caller's `switch` (there is none: compare with `==`).
public struct QueryError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of problem this is.
  public struct Kind: Sendable, Hashable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }

    /// The text is not a predicate or expression of the language.
    public static let syntax = Kind("syntax error")
    /// Nesting deeper than 100 levels.
    public static let tooDeep = Kind("too deeply nested")
    /// A key path names no attribute or relationship of the entity.
    public static let unknownProperty = Kind("unknown property")
    /// A `$variable` the caller did not declare (or did not bind, at evaluation).
    public static let unknownVariable = Kind("unknown variable")
    /// Operands whose types cannot be combined (string compared with number, …).
    public static let typeMismatch = Kind("type mismatch")
    /// A to-many key path where one value is needed.
    public static let toManyKeyPath = Kind("to-many key path")
    /// `@count`, `@sum`, `@avg`, `@min` or `@max` used where it does not apply.
    public static let invalidAggregate = Kind("invalid aggregate")
    /// A `MATCHES` pattern that is not a valid regular expression.
    public static let invalidRegularExpression = Kind("invalid regular expression")
    /// Division by zero, at evaluation.
    public static let divisionByZero = Kind("division by zero")
    /// An integer result that does not fit 64 bits, at evaluation.
    public static let overflow = Kind("arithmetic overflow")
    /// A compiled expression asked for a result of the wrong shape (one value from a
    /// to-many expression, objects from a value expression).
    public static let wrongResultShape = Kind("wrong result shape")
  }

  public let kind: Kind
  /// What is wrong, in one sentence.
  public let message: String
  /// The 0-based `Character` offset in the query text; `nil` for an error met at evaluation.
  public let offset: Int?

  public init(_ kind: Kind, _ message: String, offset: Int?) {
    self.kind = kind
    self.message = message
    self.offset = offset
  }

  public var description: String {
    if let offset { return "at \(offset): \(message)" }
    return message
  }
}

/// Converts the UTF-8 offsets kept while parsing into the `Character` offsets errors report.
struct QuerySourceText: Sendable {
  let utf8: [UInt8]

  init(_ text: String) { utf8 = Array(text.utf8) }
  init(utf8: [UInt8]) { self.utf8 = utf8 }

  /// The `Character` offset of UTF-8 offset `byte` (clamped to the text).
  func characterOffset(_ byte: Int?) -> Int? {
    guard let byte else { return nil }
    let end = max(0, min(byte, utf8.count))
    return String(decoding: utf8[0..<end], as: UTF8.self).count
  }

  func error(_ kind: QueryError.Kind, _ message: String, at byte: Int?) -> QueryError {
    QueryError(kind, message, offset: characterOffset(byte))
  }
}
