import EventGraph
internal import EventGraphText
import Foundation

/// A mapping model (`.xcmappingmodel`) turned into an EventGraph mapping file.
public struct ImportedMapping: Sendable, Equatable {
  /// The mapping file's text (`*.mapping.json`).
  public var text: String
  public var source: Int
  public var destination: Int
  public var entityMappings: Int
  /// Custom policy classes, expressions that could not be written, what was left out.
  public var notes: [String]
}

/// `eventtool import-mapping`: reads `xcmapping.xml` (the mapping model is itself a Core
/// Data XML store of Xcode's `XDDevMappingModel`, `XDDevEntityMapping`,
/// `XDDevAttributeMapping` and `XDDevRelationshipMapping` objects) and writes the mapping.
public enum CoreDataMappingImport {
  /// - Parameters:
  ///   - model: the model bundle the mapping's source and destination are versions of;
  ///     `nil`: the bundle its `sourcemodelpath` names, found as Xcode finds it.
  ///   - strict: refuse the mapping when anything of it would be converted or left out
  ///     (a note).
  public static func run(_ path: String, model: String? = nil, strict: Bool = false) throws(CoreDataError)
    -> ImportedMapping
  {
    let m = try read(path, model: model)
    if strict, let first = m.notes.first { throw CoreDataError.strict(file: path, notes: m.notes, first: first) }
    return m
  }

  private static func read(_ path: String, model: String?) throws(CoreDataError) -> ImportedMapping {
    let file = path.hasSuffix(".xml") ? path : path + "/xcmapping.xml"
    let bytes: [UInt8]
    do {
      bytes = try FileReading.contents(atPath: file)
    } catch {
      throw CoreDataError(file: file, error.reason)
    }
    let store = try XMLTree.document(bytes, root: "database", what: "a mapping model (an XML store)", file: file)
    let objects = Dictionary(
      store.children("object").compactMap { o in o.attributes["id"].map { ($0, o) } }, uniquingKeysWith: { a, _ in a })
    func attribute(_ o: XMLTree, _ name: String) -> String? {
      o.children("attribute").first { $0.attributes["name"] == name }?.text
    }
    func refs(_ o: XMLTree, _ name: String) -> [String] {
      (o.children("relationship").first { $0.attributes["name"] == name }?.attributes["idrefs"] ?? "")
        .split(separator: " ").map(String.init)
    }
    guard let root = store.children("object").first(where: { $0.attributes["type"] == "XDDEVMAPPINGMODEL" }) else {
      throw CoreDataError(file: file, "no XDDEVMAPPINGMODEL object: not a mapping model")
    }
    let (source, destination, sourceModel) = try versions(
      root, mapping: path, model: model, file: file, attribute: attribute)
    var notes: [String] = []
    var entityMappings: [(number: Int, json: JSON)] = []
    var names = Set<String>()
    for id in refs(root, "entitymappings") {
      guard let m = objects[id] else {
        throw CoreDataError(file: file, "XDDEVMAPPINGMODEL: entitymappings names \(id), which is not in the file")
      }
      let src = attribute(m, "sourcename")
      let dst = attribute(m, "destinationname")
      var name =
        attribute(m, "name") ?? (src.map { s in dst.map { "\(s)To\($0)" } ?? "Remove\(s)" } ?? "Add\(dst ?? "")")
      while names.contains(name) { name += "_" }
      names.insert(name)
      var f = [JSONField("name", .string(name))]
      if let src { f.append(JSONField("source", .string(src))) }
      if let dst { f.append(JSONField("destination", .string(dst))) }
      let check = ExpressionCheck(model: sourceModel, entity: src)
      if let filter = attribute(m, "sourcefilterpredicatestring") {
        if let problem = check.predicate(filter) {
          notes.append(
            "\(name): filter '\(filter)' has no EventGraph form (\(problem)): left out, so every \(src ?? "source") object is mapped"
          )
        } else {
          f.append(JSONField("filter", .string(filter)))
        }
      }
      var attributes: [JSONField] = []
      for a in refs(m, "attributemappings").compactMap({ objects[$0] }) {
        guard let aname = attribute(a, "name"), let expression = attribute(a, "valueexpressionstring") else { continue }
        if let e = MappingExpression.translate(expression), check.expression(e) == nil {
          attributes.append(JSONField(aname, .string(e)))
        } else {
          notes.append(
            "\(name).\(aname): value expression '\(expression)' has no EventGraph form: left out (the attribute of the same name is taken)"
          )
        }
      }
      if !attributes.isEmpty { f.append(JSONField("attributes", .object(attributes))) }
      var relationships: [JSONField] = []
      for r in refs(m, "relationshipmappings").compactMap({ objects[$0] }) {
        guard let rname = attribute(r, "name"), let through = attribute(r, "sourcemappingname") else { continue }
        let written = attribute(r, "sourcekeypath") ?? "$source"
        // A set operator (`$source.teams.@distinctUnionOfSets.members`) is the key path through
        // its collections: the relationship mapping links each destination object once.
        let sources = MappingExpression.withoutSetOperators(written)
        if let problem = check.expression(sources, objects: true) {
          notes.append(
            "\(name).\(rname): source key path '\(written)' has no EventGraph form (\(problem)): left out, so the relationship is not mapped"
          )
          continue
        }
        if sources != written {
          notes.append(
            "\(name).\(rname): source key path '\(written)' written as '\(sources)' (its set operators dropped)")
        }
        relationships.append(
          JSONField(rname, .object([JSONField("mapping", .string(through)), JSONField("sources", .string(sources))])))
      }
      if !relationships.isEmpty { f.append(JSONField("relationships", .object(relationships))) }
      if let policy = attribute(m, "migrationpolicyclassname"), !policy.isEmpty {
        f.append(JSONField("policy", .string(policy)))
        notes.append(
          "\(name): custom migration policy class \(policy): write it as a Swift MigrationPolicy registered as '\(policy)' (Docs/migration.md, \"The same with a Swift migration policy\"), or replace \"policy\" with declarative \"instances\""
        )
      }
      if src == nil { notes.append("\(name): an add mapping (no source entity): it makes nothing by itself") }
      let number = attribute(m, "mappingnumber").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? Int.max
      entityMappings.append((number, .object(f)))
    }
    let ordered = entityMappings.enumerated().sorted { ($0.element.number, $0.offset) < ($1.element.number, $1.offset) }
    let json = JSON.object([
      JSONField("source", .int(Int64(source))), JSONField("destination", .int(Int64(destination))),
      JSONField("entityMappings", .array(ordered.map(\.element.json))),
    ])
    return ImportedMapping(
      text: json.serialized(pretty: true) + "\n", source: source, destination: destination,
      entityMappings: ordered.count, notes: notes)
  }

  /// The model bundle a mapping's `sourcemodelpath` names, found as Xcode finds it: by the
  /// bundle's name (the path's `.xcdatamodeld`, or its `.xcdatamodel` when it has none),
  /// next to the mapping model, then in each folder up the tree; a path that holds the
  /// bundle's own folder (`Models/Shop.xcdatamodeld/…`) is tried whole at each level too.
  static func locateModel(_ sourcePath: String, mapping: String, file: String) throws(CoreDataError) -> String {
    let parts = sourcePath.split(separator: "/").map(String.init)
    guard
      let i = parts.firstIndex(where: { $0.hasSuffix(".xcdatamodeld") })
        ?? parts.lastIndex(where: { $0.hasSuffix(".xcdatamodel") })
    else {
      throw CoreDataError(file: file, "sourcemodelpath '\(sourcePath)' names no .xcdatamodeld or .xcdatamodel bundle")
    }
    let name = parts[i]
    let withFolders = parts[...i].joined(separator: "/")
    var dir = URL(fileURLWithPath: mapping).standardizedFileURL.deletingLastPathComponent()
    var looked: [String] = []
    while true {
      for candidate in [withFolders, name] {
        let path = dir.appendingPathComponent(candidate).path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
          return path
        }
      }
      looked.append(dir.path)
      let parent = dir.deletingLastPathComponent()
      if parent.path == dir.path || looked.count >= 32 { break }
      dir = parent
    }
    throw CoreDataError(
      file: file,
      "the model \(name) that the mapping names (sourcemodelpath '\(sourcePath)') is in none of \(looked.first ?? "?") and the folders above it: name the model bundle"
    )
  }

  /// The source and destination version numbers: the versions the mapping's model paths
  /// name, numbered as `import-model` numbers them.
  private static func versions(
    _ root: XMLTree, mapping: String, model: String?, file: String, attribute: (XMLTree, String) -> String?
  ) throws(CoreDataError) -> (Int, Int, sourceModel: Model?) {
    guard let sourcePath = attribute(root, "sourcemodelpath"),
      let destinationPath = attribute(root, "destinationmodelpath")
    else { throw CoreDataError(file: file, "XDDEVMAPPINGMODEL: no sourcemodelpath and destinationmodelpath") }
    let bundle: String
    if let model { bundle = model } else { bundle = try locateModel(sourcePath, mapping: mapping, file: file) }
    let (bundleName, versions) = try CoreDataModelBundle.read(bundle)
    func number(_ p: String) throws(CoreDataError) -> Int {
      let name = URL(fileURLWithPath: p).deletingPathExtension().lastPathComponent
      guard let v = versions.first(where: { $0.name == name }) else {
        throw CoreDataError(file: file, "the model \(bundle) has no version '\(name)' (the mapping's \(p))")
      }
      return v.version
    }
    let sourceNumber = try number(sourcePath)
    // The source version as EventGraph reads it, to check the expressions written against
    // (`nil` when it does not load: the mapping is then written unchecked, as before).
    let sourceModel = versions.first { $0.version == sourceNumber }.flatMap { v in
      (try? v.model.modelFile(name: bundleName, version: sourceNumber, file: bundle, options: .loadable))
        .flatMap { try? Model(json: Array($0.text.utf8)) }
    }
    return (sourceNumber, try number(destinationPath), sourceModel)
  }
}

/// Checks the text a mapping file will hold against the source model, as the upcaster
/// compiles it; with no model (one that did not load), everything passes.
struct ExpressionCheck {
  let model: Model?
  let entity: String?

  private var context: (Model, Entity)? {
    guard let model, let entity, let e = model.entity(named: entity) else { return nil }
    return (model, e)
  }

  /// Why `text` is no predicate of the source entity, or `nil`.
  func predicate(_ text: String) -> String? {
    guard let (m, e) = context else { return nil }
    do {
      _ = try CompiledPredicate.compile(text, entity: e.id, model: m, variables: ["source": .object(e.id)])
      return nil
    } catch {
      return error.message
    }
  }

  /// Why `text` is no expression over the source entity, or `nil`; with `objects`, one
  /// that reaches objects (a relationship mapping's sources).
  func expression(_ text: String, objects: Bool = false) -> String? {
    guard let (m, e) = context else { return nil }
    do {
      let c = try CompiledExpression.compile(text, entity: e.id, model: m, variables: ["source": .object(e.id)])
      if objects, case .object = c.resultType.element {
        return nil
      } else if objects {
        return "it gives \(c.resultType), not objects"
      }
      return nil
    } catch {
      return error.message
    }
  }
}

/// Core Data value expressions in the EventGraph expression language, where one exists.
public enum MappingExpression {
  /// A key path with its collection operators `@distinctUnionOfSets`, `@unionOfSets`,
  /// `@distinctUnionOfArrays` and `@unionOfArrays` dropped: each takes the key path after
  /// it through every member, which EventGraph's key paths through to-many relationships do.
  public static func withoutSetOperators(_ path: String) -> String {
    let operators: Set<Substring> = [
      "@distinctUnionOfSets", "@unionOfSets", "@distinctUnionOfArrays", "@unionOfArrays",
    ]
    let parts = path.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.contains(where: { operators.contains($0) }) else { return path }
    return parts.filter { !operators.contains($0) }.joined(separator: ".")
  }

  /// `$source.a.b` as it is; `FUNCTION($source.x, "uppercaseString")` and its kin as
  /// `uppercase($source.x)`; a quoted string or a number as a literal; otherwise `nil`.
  public static func translate(_ text: String) -> String? {
    let t = text.trimmingCharacters(in: .whitespaces)
    if t.hasPrefix("$source"), t.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "$" }) {
      return t
    }
    if Double(t) != nil { return t }
    if t.count >= 2, let q = t.first, q == "\"" || q == "'", t.last == q, !t.dropFirst().dropLast().contains(q) {
      return "'" + t.dropFirst().dropLast() + "'"
    }
    let functions = ["uppercaseString": "uppercase", "lowercaseString": "lowercase"]
    guard t.hasPrefix("FUNCTION("), t.hasSuffix(")") else { return nil }
    let inner = t.dropFirst("FUNCTION(".count).dropLast()
    let parts = inner.split(separator: ",", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
    guard parts.count == 2, let path = translate(parts[0]), path.hasPrefix("$source") else { return nil }
    let selector = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
    return functions[selector].map { "\($0)(\(path))" }
  }
}
