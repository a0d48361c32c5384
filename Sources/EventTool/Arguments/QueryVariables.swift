import EventGraph
internal import EventGraphText
import Foundation

/// `--var NAME=VALUE`, repeated: the values of a predicate's `$variables`.
///
/// VALUE is read as JSON when it is a JSON number, `true`, `false` or a quoted string
/// (`--var 'code="007"'` for the string `007`); otherwise text that is an ISO 8601 date is a
/// date, and any other text a string.
enum QueryVariables {
  static let option = OptionSpec(
    "var", valueName: "NAME=VALUE",
    help: "Bind $NAME in the predicate: a number, true/false, an ISO 8601 date, or a string. Repeatable.",
    isRepeatable: true)

  static func parse(_ a: ParsedArguments) throws -> [String: Value] {
    var bound: [String: Value] = [:]
    for assignment in a.values("var") {
      guard let eq = assignment.firstIndex(of: "="), eq != assignment.startIndex else {
        throw ToolError.usage("--var needs NAME=VALUE, not '\(assignment)'")
      }
      let name = String(assignment[..<eq])
      guard name.first.map({ $0.isLetter || $0 == "_" }) == true,
        name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
      else { throw ToolError.usage("--var \(assignment): '\(name)' is not a variable name (letters, digits, _)") }
      guard bound[name] == nil else { throw ToolError.usage("--var \(name) is given twice") }
      bound[name] = value(String(assignment[assignment.index(after: eq)...]))
    }
    return bound
  }

  static func value(_ text: String) -> Value {
    switch try? JSON(parsing: text) {
    case .int(let n)?: return .int64(n)
    case .double(let d)?: return .double(d)
    case .bool(let b)?: return .boolean(b)
    case .string(let s)?: return .string(s)
    default: return ISO8601.parse(text).map(Value.date) ?? .string(text)
    }
  }
}
