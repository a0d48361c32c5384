/// Foundation's `FUNCTION(receiver, 'method')` and `CAST(value, 'Class')`, for the methods and
/// classes this language answers: each becomes the function that gives Foundation's answer.
extension QueryParser {
  /// Foundation's class names and the functions that cast to them.
  static let casts: [String: QueryFunction] = ["NSDate": .date, "NSNumber": .number]

  /// The function for `CAST(value, 'Class')`'s arguments.
  func cast(_ arguments: [QueryExpression], at start: Int) throws(QueryError) -> QueryFunction {
    guard arguments.count == 2 else {
      throw fail("CAST takes a value and a class name, found \(arguments.count) arguments", at: start)
    }
    guard case .literal(.string(let name)) = arguments[1].kind else {
      throw fail("CAST's class is named by a string, as in CAST(x, 'NSDate')", at: arguments[1].sourceOffset ?? start)
    }
    guard let f = Self.casts[name] else {
      let known = Self.casts.keys.sorted().joined(separator: ", ")
      throw fail("CAST to '\(name)': this language casts to \(known)", at: arguments[1].sourceOffset ?? start)
    }
    return f
  }

  /// Foundation's method names and the functions that answer them.
  static let methods: [String: QueryFunction] = [
    "length": .utf16length, "uppercaseString": .uppercase, "lowercaseString": .lowercase,
  ]

  /// The function for `FUNCTION(receiver, 'method')`'s arguments.
  func method(_ arguments: [QueryExpression], at start: Int) throws(QueryError) -> QueryFunction {
    guard arguments.count == 2 else {
      throw fail("FUNCTION takes a receiver and a method name, found \(arguments.count) arguments", at: start)
    }
    guard case .literal(.string(let name)) = arguments[1].kind else {
      throw fail(
        "FUNCTION's method is named by a string, as in FUNCTION(name, 'length')", at: arguments[1].sourceOffset ?? start
      )
    }
    guard let f = Self.methods[name] else {
      let known = Self.methods.keys.sorted().joined(separator: ", ")
      throw fail("FUNCTION: no method '\(name)' here (\(known))", at: arguments[1].sourceOffset ?? start)
    }
    return f
  }
}
