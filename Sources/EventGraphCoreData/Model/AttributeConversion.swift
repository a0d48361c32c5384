internal import EventGraphText
import Foundation

/// An attribute of a Core Data model as a model file attribute: its type, and its default,
/// minimum and maximum as values of that type.
extension ModelFileWriter {
  mutating func attribute(_ a: CoreDataAttribute, in e: CoreDataEntity, indexed: Bool) throws(CoreDataError) -> JSON {
    let at = "\(e.name).\(a.name)"
    guard let base = a.type.eventGraphType else {
      throw CoreDataError(
        file: file,
        "\(at): attribute type '\(a.type.rawValue)' has no EventGraph type (string, integers, decimal, double, float, boolean, date, binary, UUID, URI, transformable)"
      )
    }
    let transformable = a.type == .transformable
    var g = [JSONField("name", .string(a.name))]
    g.append(JSONField("type", .string(transformable && options.rules ? "transformable" : base)))
    if transformable {
      let t = a.transformer.map { "value transformer \($0)" } ?? "the default value transformer"
      if options.rules, let name = a.transformer {
        g.append(JSONField("transformer", .string(name)))
      } else if !options.rules {
        notes.append("\(at): transformable (\(t)): kept as binary, the transformer's name not kept")
      }
      if let c = a.customClassName {
        notes.append("\(at): transformable of class \(c): its bytes are kept as they are")
      }
    }
    if a.isOptional { g.append(JSONField("optional", .bool(true))) }
    if let d = a.defaultValue {
      g.append(JSONField("default", try value(d, a.type, at: "\(at): default")))
    }
    if let r = a.renamingIdentifier, r != a.name { g.append(JSONField("renamingIdentifier", .string(r))) }
    if indexed { g.append(JSONField("indexed", .bool(true))) }
    if a.isTransient && options.transient { g.append(JSONField("transient", .bool(true))) }
    // Minimum and maximum: values for numbers and dates, lengths for text and bytes.
    let lengths = [.string, .binary, .transformable, .uri].contains(a.type)
    for (key, text) in [("min", a.minValue), ("max", a.maxValue)] {
      guard let text else { continue }
      let name = key + (lengths ? "Length" : "Value")
      let v: JSON
      if lengths {
        guard let n = Int64(text.trimmingCharacters(in: .whitespaces)), n >= 0 else {
          throw CoreDataError(file: file, "\(at): \(key)ValueString '\(text)' is not a length")
        }
        v = .int(n)
      } else {
        v = try value(text, a.type, at: "\(at): \(key)ValueString")
      }
      if options.rules {
        g.append(JSONField(name, v))
      } else {
        notes.append("\(at): \(name) \(text): not kept")
      }
    }
    if let r = a.regularExpression {
      if options.rules {
        g.append(JSONField("regularExpression", .string(r)))
      } else {
        notes.append("\(at): regular expression \(r): not kept")
      }
    }
    if let info = userInfo(a.userInfo, of: at) { g.append(info) }
    return .object(g)
  }

  /// A value Core Data writes as text (a default, a minimum) in the model file's form for
  /// the type: numbers as numbers, decimals as strings, dates (seconds since 2001) as ISO
  /// 8601, booleans from `YES`/`NO`.
  ///
  /// Text that is not the type's own form is read as Core Data reads it — through
  /// `NSString`'s `integerValue`, `doubleValue` and `boolValue`, which take the longest
  /// leading number and give 0 or false when there is none (`"NO"` for an integer is 0,
  /// `"0.0"` for a boolean is false) — and each such reading is noted.
  mutating func value(_ text: String, _ type: CoreDataAttributeType, at: String) throws(CoreDataError) -> JSON {
    let t = text.trimmingCharacters(in: .whitespaces)
    func fail() -> CoreDataError {
      CoreDataError(file: file, "\(at) '\(text)' is not a \(type.rawValue) value")
    }
    func lenient(_ v: JSON, _ shown: String) -> JSON {
      notes.append("\(at) '\(text)' is no \(type.rawValue) value: read as \(shown), as Core Data reads it")
      return v
    }
    switch type {
    case .integer16, .integer32, .integer64:
      let range: ClosedRange<Int64> =
        type == .integer16 ? -32768...32767 : type == .integer32 ? -2_147_483_648...2_147_483_647 : .min ... .max
      if let n = Int64(t), range.contains(n) { return .int(n) }
      // Xcode writes "0.0" for some integer defaults.
      if let d = Double(t), d.rounded() == d, let n = Int64(exactly: d), range.contains(n) { return .int(n) }
      // A whole integer out of the type's range is refused, as it was; other text is read
      // as NSString's integerValue reads it (the leading integer, 0 when there is none), if
      // that fits the type.
      let n = Self.leadingInteger(t)
      guard Int64(t) == nil, range.contains(n) else { throw fail() }
      return lenient(.int(n), "\(n)")
    case .double, .float:
      if let d = Double(t), d.isFinite { return .double(d) }
      let d = Self.leadingDouble(t)
      return lenient(.double(d), "\(d)")
    case .decimal:
      guard Decimal(string: t) != nil, Double(t) != nil else { throw fail() }
      return .string(t)
    case .boolean:
      switch t.uppercased() {
      case "YES", "TRUE", "1": return .bool(true)
      case "NO", "FALSE", "0": return .bool(false)
      default:
        let b = Self.leadingBool(t)
        return lenient(.bool(b), b ? "true" : "false")
      }
    case .date:
      guard let s = Double(t), s.isFinite, abs(s) < 1e12 else { throw fail() }
      return .string(ISO8601.format(Date(timeIntervalSince1970: s + EventGraphDates.epoch2001)))
    case .uuid:
      guard UUID(uuidString: t) != nil else { throw fail() }
      return .string(t.uppercased())
    case .string, .uri:
      return .string(text)
    case .binary, .transformable, .undefined, .objectID, .composite:
      throw CoreDataError(
        file: file, "\(at): a \(type.rawValue) attribute cannot have a default or bound written as text")
    }
  }

  /// `NSString.integerValue`: after spaces, an optional sign and the digits that follow;
  /// 0 when there are none; saturated at the 64-bit bounds.
  static func leadingInteger(_ t: String) -> Int64 {
    var chars = Substring(t).drop { $0 == " " || $0 == "\t" }
    var negative = false
    if let c = chars.first, c == "-" || c == "+" {
      negative = c == "-"
      chars = chars.dropFirst()
    }
    var n: Int64 = 0
    for c in chars {
      guard let d = c.wholeNumberValue, c.isASCII else { break }
      let (m, o1) = n.multipliedReportingOverflow(by: 10)
      let (s, o2) = m.addingReportingOverflow(Int64(d))
      if o1 || o2 { return negative ? .min : .max }
      n = s
    }
    return negative ? -n : n
  }

  /// `NSString.doubleValue`: the longest leading decimal number; 0 when there is none.
  static func leadingDouble(_ t: String) -> Double {
    let chars = Array(t.drop { $0 == " " || $0 == "\t" })
    var best = 0.0
    var end = 0
    while end < chars.count {
      end += 1
      if let d = Double(String(chars[0..<end])), d.isFinite { best = d }
    }
    return best
  }

  /// `NSString.boolValue`: after spaces, an optional sign and leading zeros, true when the
  /// next character is `Y`, `y`, `T`, `t` or a digit from 1 to 9.
  static func leadingBool(_ t: String) -> Bool {
    var chars = Substring(t).drop { $0 == " " || $0 == "\t" }
    if let c = chars.first, c == "-" || c == "+" { chars = chars.dropFirst() }
    chars = chars.drop { $0 == "0" }
    guard let c = chars.first else { return false }
    return "YyTt123456789".contains(c)
  }
}
