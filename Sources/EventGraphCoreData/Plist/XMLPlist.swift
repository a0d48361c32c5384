internal import EventGraphText
import Foundation

/// The XML form of a property list (`.xccurrentversion`, `VersionInfo.plist`, the
/// metadata of an XML store), read from an ``XMLTree``.
public enum XMLPlist {
  /// Reads a plist file in either form: binary (`bplist00`) or XML.
  public static func read(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
    if BinaryPlist.isBinaryPlist(bytes) { return try BinaryPlist(bytes).topValue() }
    let tree = try XMLTree(parsing: bytes)
    guard tree.name == "plist" else {
      throw PlistError("line \(tree.line): expected a <plist> document, found <\(tree.name)>")
    }
    return try value(ofPlist: tree)
  }

  /// The value inside a `<plist>` element.
  public static func value(ofPlist plist: XMLTree) throws(PlistError) -> PlistValue {
    guard let first = plist.children.first else { throw PlistError("line \(plist.line): an empty <plist>") }
    return try value(first, depth: 0)
  }

  static func value(_ e: XMLTree, depth: Int) throws(PlistError) -> PlistValue {
    guard depth < BinaryPlist.maxDepth else { throw PlistError("line \(e.line): the plist nests too deep") }
    let text = e.text.trimmingCharacters(in: .whitespacesAndNewlines)
    switch e.name {
    case "string": return .string(e.text)
    case "integer":
      guard let n = Int64(text) else { throw PlistError("line \(e.line): '\(text)' is not an integer") }
      return .int(n)
    case "real":
      guard let d = Double(text) else { throw PlistError("line \(e.line): '\(text)' is not a number") }
      return .real(d)
    case "true": return .bool(true)
    case "false": return .bool(false)
    case "data":
      guard let d = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
        throw PlistError("line \(e.line): <data> that is not base64")
      }
      return .data([UInt8](d))
    case "date":
      guard let d = EventGraphDates.parse(text) else { throw PlistError("line \(e.line): '\(text)' is not a date") }
      return .date(d)
    case "array":
      var a: [PlistValue] = []
      for c in e.children { a.append(try value(c, depth: depth + 1)) }
      return .array(a)
    case "dict":
      var d: [(key: String, value: PlistValue)] = []
      var key: String? = nil
      for c in e.children {
        if c.name == "key" {
          guard key == nil else { throw PlistError("line \(c.line): two <key>s in a row") }
          key = c.text
        } else {
          guard let k = key else { throw PlistError("line \(c.line): a <\(c.name)> without its <key>") }
          d.append((k, try value(c, depth: depth + 1)))
          key = nil
        }
      }
      guard key == nil else { throw PlistError("line \(e.line): a <key> without its value") }
      return .dictionary(d)
    default:
      throw PlistError("line \(e.line): <\(e.name)> is not a plist element")
    }
  }
}

/// Core Data's dates: seconds since 2001-01-01 00:00:00 UTC.
enum EventGraphDates {
  /// 2001-01-01 in seconds since 1970.
  static let epoch2001 = 978_307_200.0

  /// An XML plist date (`2026-11-29T10:00:00Z`) as seconds since 2001.
  static func parse(_ text: String) -> Double? {
    ISO8601.parse(text).map { $0.timeIntervalSince1970 - epoch2001 }
  }
}
