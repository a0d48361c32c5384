/// The canonical text of syntax trees: what `description` prints.
///
/// The law: parsing the printed text gives back an equal tree. Keywords print in
/// capitals, `==` and `!=` for equality, strings in double quotes with escapes,
/// parentheses only where precedence needs them (and around an `AND` or `OR` nested
/// in another of the same kind, which the parser would otherwise flatten).
extension QueryPredicate {
  var description: String {
    var out = ""
    QueryPrinter.print(self, into: &out)
    return out
  }
}

extension QueryExpression {
  var description: String {
    var out = ""
    QueryPrinter.print(self, into: &out)
    return out
  }
}

extension QueryKeyPath: CustomStringConvertible {
  var description: String {
    var out = ""
    QueryPrinter.print(self, into: &out)
    return out
  }
}

enum QueryPrinter {
  static func print(_ p: QueryPredicate, into out: inout String) {
    switch p.kind {
    case .constant(let value):
      out += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
    case .not(let operand):
      out += "NOT "
      printOperand(operand, parenthesize: operand.isCompound, into: &out)
    case .and(let operands):
      for (i, operand) in operands.enumerated() {
        if i > 0 { out += " AND " }
        printOperand(operand, parenthesize: operand.isCompound, into: &out)
      }
    case .or(let operands):
      for (i, operand) in operands.enumerated() {
        if i > 0 { out += " OR " }
        if case .or = operand.kind {
          printOperand(operand, parenthesize: true, into: &out)
        } else {
          printOperand(operand, parenthesize: false, into: &out)
        }
      }
    case .comparison(let c):
      if let q = c.quantifier { out += q.rawValue + " " }
      print(c.left, into: &out)
      out += " " + c.op.rawValue + c.options.modifierText + " "
      print(c.right, into: &out)
    }
  }

  private static func printOperand(_ p: QueryPredicate, parenthesize: Bool, into out: inout String) {
    if parenthesize { out += "(" }
    print(p, into: &out)
    if parenthesize { out += ")" }
  }

  static func print(_ e: QueryExpression, into out: inout String) {
    switch e.kind {
    case .literal(let literal):
      print(literal, into: &out)
    case .keyPath(let path):
      print(path, into: &out)
    case .list(let items):
      out += "{"
      printCommaSeparated(items, into: &out)
      out += "}"
    case .function(let f, let arguments):
      out += f.rawValue + "("
      printCommaSeparated(arguments, into: &out)
      out += ")"
    case .subquery(let s):
      out += "SUBQUERY("
      print(s.collection, into: &out)
      out += ", $" + s.variable + ", "
      print(s.predicate, into: &out)
      out += ")"
      printComponents(s.tail.components, dotFirst: true, into: &out)
    case .negation(let operand):
      out += "-"
      switch operand.kind {
      case .keyPath, .function, .subquery:
        print(operand, into: &out)
      default:
        out += "("
        print(operand, into: &out)
        out += ")"
      }
    case .arithmetic(let op, let left, let right):
      printArithmeticOperand(left, parenthesize: { $0 < op.precedence }, into: &out)
      out += " " + op.rawValue + " "
      printArithmeticOperand(right, parenthesize: { $0 <= op.precedence }, into: &out)
    }
  }

  private static func printArithmeticOperand(
    _ e: QueryExpression, parenthesize: (Int) -> Bool, into out: inout String
  ) {
    if case .arithmetic(let inner, _, _) = e.kind, parenthesize(inner.precedence) {
      out += "("
      print(e, into: &out)
      out += ")"
    } else {
      print(e, into: &out)
    }
  }

  private static func printCommaSeparated(_ items: [QueryExpression], into out: inout String) {
    for (i, item) in items.enumerated() {
      if i > 0 { out += ", " }
      print(item, into: &out)
    }
  }

  static func print(_ literal: QueryLiteral, into out: inout String) {
    switch literal {
    case .null: out += "nil"
    case .boolean(let b): out += b ? "TRUE" : "FALSE"
    case .integer(let n): out += String(n)
    case .double(let d): out += d.description
    case .string(let s): printString(s, into: &out)
    }
  }

  static func print(_ path: QueryKeyPath, into out: inout String) {
    if let variable = path.variable {
      out += "$" + variable
    } else if path.components.isEmpty {
      out += "SELF"
    }
    printComponents(path.components, dotFirst: path.variable != nil, into: &out)
  }

  private static func printComponents(
    _ components: [QueryKeyPath.Component], dotFirst: Bool, into out: inout String
  ) {
    for (i, component) in components.enumerated() {
      if case .element(let index) = component {
        switch index {
        case .first: out += "[FIRST]"
        case .last: out += "[LAST]"
        case .at(let n): out += "[\(n)]"
        }
        continue
      }
      if i > 0 || dotFirst { out += "." }
      switch component {
      case .property(let name):
        if QueryKeyword.named(name) != nil { out += "#" }
        out += name
      case .aggregate(let a):
        out += "@" + a.rawValue
      case .element:
        break
      }
    }
  }

  /// A double-quoted literal; escapes exactly what the lexer would not read back as itself.
  static func printString(_ s: String, into out: inout String) {
    out += "\""
    for scalar in s.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r": out += "\\r"
      case "\0": out += "\\0"
      default:
        if scalar.value < 0x20 || scalar.value == 0x7F {
          out += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    out += "\""
  }
}

extension QueryPredicate {
  /// Whether the predicate is an `AND` or an `OR` (printed in parentheses as an operand).
  fileprivate var isCompound: Bool {
    switch kind {
    case .and, .or: true
    default: false
    }
  }
}
