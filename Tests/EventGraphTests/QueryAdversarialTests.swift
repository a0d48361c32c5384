import Foundation
import TestSupport
import Testing

@testable import EventGraph
@testable import EventGraphQuery

@Suite("Query adversarial input")
struct QueryAdversarialTests {
  private func compileError(_ text: String) -> QueryError? {
    queryError {
      _ = try CompiledPredicate.compile(text, entity: QueryTestModel.sample, model: QueryTestModel.model)
    }
  }

  @Test("100,000 nested parentheses are refused at the first one too deep")
  func nestedParentheses() {
    let text = String(repeating: "(", count: 100_000) + "s == 'x'" + String(repeating: ")", count: 100_000)
    let error = compileError(text)
    #expect(error?.kind == .tooDeep)
    #expect(error?.offset == QueryPredicate.maximumDepth)
  }

  @Test("100,000 unclosed parentheses are refused the same way")
  func unclosedParentheses() {
    let error = compileError(String(repeating: "(", count: 100_000))
    #expect(error?.kind == .tooDeep)
  }

  @Test("parentheses up to the limit are fine")
  func parenthesesAtTheLimit() throws {
    let depth = QueryPredicate.maximumDepth
    let text = String(repeating: "(", count: depth) + "s == 'x'" + String(repeating: ")", count: depth)
    let objects = QueryMemoryObjects()
    #expect(try queryHolds(text, on: objects.insert("Sample", ["s": .string("x")]), in: objects))
    let deeper = "(" + text + ")"
    #expect(compileError(deeper)?.kind == .tooDeep)
  }

  @Test("100,000 NOTs are refused")
  func manyNots() {
    let text = String(repeating: "NOT ", count: 100_000) + "s == 'x'"
    let error = compileError(text)
    #expect(error?.kind == .tooDeep)
    #expect(error?.offset != nil)
    #expect(compileError(String(repeating: "!", count: 100_000) + "s == 'x'")?.kind == .tooDeep)
  }

  @Test("fifty NOTs are fine, and cancel in pairs")
  func someNots() throws {
    let objects = QueryMemoryObjects()
    let o = objects.insert("Sample", ["s": .string("x")])
    #expect(try queryHolds(String(repeating: "NOT ", count: 50) + "s == 'x'", on: o, in: objects))
    #expect(try queryHolds(String(repeating: "NOT ", count: 51) + "s == 'x'", on: o, in: objects) == false)
  }

  @Test("trees up to the depth limit check and evaluate; one level more is refused")
  func depthLimit() throws {
    let objects = QueryMemoryObjects()
    let o = objects.insert("Sample", ["i64": .int64(1)])
    // The key path is one level, each "(1 + " one more, the comparison one more.
    let levels = QueryPredicate.maximumDepth - 1
    let sum = String(repeating: "(1 + ", count: levels - 1) + "i64" + String(repeating: ")", count: levels - 1)
    #expect(try queryHolds("\(levels) == \(sum)", on: o, in: objects))
    let deeper = "1 + " + sum
    #expect(compileError("\(levels + 1) == \(deeper)")?.kind == .tooDeep)
  }

  @Test("100,000 unary minuses, nested calls and nested braces are refused")
  func otherNesting() {
    #expect(compileError("i64 == " + String(repeating: "-", count: 100_000) + "1")?.kind == .tooDeep)
    #expect(compileError("i64 == " + String(repeating: "- ", count: 100_000) + "i64")?.kind == .tooDeep)
    let calls = String(repeating: "abs(", count: 100_000) + "1" + String(repeating: ")", count: 100_000)
    #expect(compileError("i64 == " + calls)?.kind == .tooDeep)
    let braces = String(repeating: "{", count: 100_000) + String(repeating: "}", count: 100_000)
    #expect(compileError("i64 IN " + braces)?.kind == .tooDeep)
  }

  @Test("a long arithmetic chain is refused before it makes a deep tree")
  func longArithmeticChain() {
    let text = "i64 == " + Array(repeating: "1", count: 100_000).joined(separator: " + ")
    #expect(compileError(text)?.kind == .tooDeep)
  }

  @Test("a 10 MB string literal parses, and compares")
  func hugeStringLiteral() throws {
    let big = String(repeating: "abcdefghij", count: 1_000_000)
    let objects = QueryMemoryObjects()
    let o = objects.insert("Sample", ["s": .string(big)])
    #expect(try queryHolds("s == '\(big)'", on: o, in: objects))
    #expect(try queryHolds("s BEGINSWITH 'abc' AND s ENDSWITH 'hij' AND length(s) == 10000000", on: o, in: objects))
    let p = try QueryPredicate(parsing: "s == \"\(big)\\n\"")
    guard case .comparison(let c) = p.kind, case .literal(.string(let s)) = c.right.kind else {
      Issue.record("not a comparison with a string")
      return
    }
    #expect(s.utf8.count == 10_000_001)
  }

  @Test("an unterminated 10 MB string names where it starts")
  func hugeUnterminatedString() {
    let error = compileError("s == 'x' AND t == '" + String(repeating: "a", count: 10_000_000))
    #expect(error?.kind == .syntax)
    #expect(error?.offset == 18)
    #expect(error?.message.contains("unterminated") == true)
  }

  @Test("an invalid regular expression is a check-time error at the pattern")
  func invalidRegex() {
    for pattern in ["(", "[a-", "*", "a{2,1}", "(?<name", "\\\\"] {
      let error = compileError("s MATCHES '\(pattern)'")
      #expect(error?.kind == .invalidRegularExpression, "\(pattern)")
      #expect(error?.offset == 10, "\(pattern)")
    }
  }

  @Test("a catastrophic LIKE pattern still answers quickly")
  func likeBacktracking() throws {
    let objects = QueryMemoryObjects()
    let o = objects.insert("Sample", ["s": .string(String(repeating: "a", count: 5_000))])
    let pattern = String(repeating: "*a", count: 50) + "b"
    #expect(try queryHolds("s LIKE '\(pattern)'", on: o, in: objects) == false)
  }

  @Test("random bytes never crash the parser")
  func fuzz() {
    var random = SeededGenerator(seed: 42)
    let alphabet = Array("abc $@#.()[]{}'\"\\!=<>&|*+-/?,0123456789eExX NOT AND OR ANY IN é桃\n")
    for _ in 0..<5_000 {
      let length = Int.random(in: 0..<40, using: &random)
      let text = String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] })
      do {
        let p = try QueryPredicate(parsing: text)
        #expect(try QueryPredicate(parsing: p.description) == p, "\(text)")
      } catch {
        #expect(error.offset != nil)
        #expect((error.offset ?? 0) <= text.count)
      }
    }
  }
}
