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
  func value(_ text: String, _ type: CoreDataAttributeType, at: String) throws(CoreDataError) -> JSON {
    let t = text.trimmingCharacters(in: .whitespaces)
    func fail() -> CoreDataError {
      CoreDataError(file: file, "\(at) '\(text)' is not a \(type.rawValue) value")
    }
    switch type {
    case .integer16, .integer32, .integer64:
      let range: ClosedRange<Int64> =
        type == .integer16 ? -32768...32767 : type == .integer32 ? -2_147_483_648...2_147_483_647 : .min ... .max
      if let n = Int64(t), range.contains(n) { return .int(n) }
      // Xcode writes "0.0" for some integer defaults.
      if let d = Double(t), d.rounded() == d, let n = Int64(exactly: d), range.contains(n) { return .int(n) }
      throw fail()
    case .double, .float:
      guard let d = Double(t), d.isFinite else { throw fail() }
      return .double(d)
    case .decimal:
      guard Decimal(string: t) != nil, Double(t) != nil else { throw fail() }
      return .string(t)
    case .boolean:
      switch t.uppercased() {
      case "YES", "TRUE", "1": return .bool(true)
      case "NO", "FALSE", "0": return .bool(false)
      default: throw fail()
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
}
