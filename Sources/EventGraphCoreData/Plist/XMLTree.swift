import Foundation

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// An XML document read whole into elements, by Foundation's `XMLParser` (libxml2).
///
/// What the model `contents`, XML plists, XML stores and mapping models are read from. External
/// entities (Core Data's DTD) are never fetched.
public struct XMLTree: Sendable, Equatable {
  public var name: String
  public var attributes: [String: String]
  public var children: [XMLTree]
  /// The text directly inside the element, whitespace included.
  public var text: String
  /// The 1-based line the element starts on, for errors.
  public var line: Int

  public init(
    name: String, attributes: [String: String] = [:], children: [XMLTree] = [], text: String = "", line: Int = 0
  ) {
    self.name = name
    self.attributes = attributes
    self.children = children
    self.text = text
    self.line = line
  }

  /// Parses a document; the error names the line and column libxml2 stopped at.
  public init(parsing bytes: [UInt8]) throws(PlistError) {
    // Foundation's XMLParser traps on a name that is not valid UTF-8 (found by the cdmodel
    // fuzzer): such a file is refused before it is parsed. Core Data writes UTF-8.
    if let offset = Self.firstInvalidUTF8(bytes) {
      throw PlistError("not valid UTF-8 at byte \(offset)")
    }
    // It also crashes on a processing instruction without data (`<?x?>`, found by the same
    // fuzzer). Core Data's files hold none but the XML declaration at the start: any other
    // is refused. So are entity declarations, which no Core Data file has either.
    if let offset = Self.firstProcessingInstruction(bytes) {
      throw PlistError("a processing instruction or entity declaration at byte \(offset): not part of a Core Data file")
    }
    let parser = XMLParser(data: Data(bytes))
    parser.shouldResolveExternalEntities = false
    let builder = TreeBuilder(parser)
    parser.delegate = builder
    let ok = parser.parse()
    guard ok, let root = builder.root else {
      let e = parser.parserError.map { ($0 as NSError).localizedDescription } ?? "not XML"
      throw PlistError("not well-formed XML at line \(parser.lineNumber), column \(parser.columnNumber): \(e)")
    }
    self = root
  }

  /// The offset of the first `<?` or `<!ENTITY` after the XML declaration, or `nil`.
  static func firstProcessingInstruction(_ bytes: [UInt8]) -> Int? {
    var start = 0
    while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains(bytes[start]) { start += 1 }
    // The declaration ends at its first `?>` and holds no `<`: one left open (`<?xml … />`)
    // must not swallow a later instruction as its end (found by the cdmodel fuzzer), so it
    // is refused as an instruction itself.
    if bytes[start...].starts(with: Array("<?xml ".utf8)), let end = find(Array("?>".utf8), in: bytes, from: start),
      !bytes[(start + 2)..<end].contains(UInt8(ascii: "<"))
    {
      start = end + 2
    }
    let pi = find(Array("<?".utf8), in: bytes, from: start)
    let entity = find(Array("<!ENTITY".utf8), in: bytes, from: start)
    return [pi, entity].compactMap { $0 }.min()
  }

  private static func find(_ needle: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
    guard needle.count <= bytes.count, from <= bytes.count - needle.count else { return nil }
    for i in from...(bytes.count - needle.count) where bytes[i] == needle[0] {
      if bytes[i..<(i + needle.count)].elementsEqual(needle) { return i }
    }
    return nil
  }

  /// The offset of the first byte that is not part of valid UTF-8, or `nil`.
  static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
    var decoder = Unicode.UTF8.ForwardParser()
    var iterator = bytes.makeIterator()
    var offset = 0
    while true {
      switch decoder.parseScalar(from: &iterator) {
      case .valid(let scalar): offset += scalar.count
      case .emptyInput: return nil
      case .error(let length): _ = length; return offset
      }
    }
  }

  /// Parses the document of a Core Data file whose root element must be `root`.
  static func document(_ bytes: [UInt8], root: String, what: String, file: String) throws(CoreDataError) -> XMLTree {
    let tree: XMLTree
    do {
      tree = try XMLTree(parsing: bytes)
    } catch {
      throw CoreDataError(file: file, "\(error)")
    }
    guard tree.name == root else {
      throw CoreDataError(file: file, "line \(tree.line): expected \(what) (<\(root)>), found <\(tree.name)>")
    }
    return tree
  }

  /// The child elements with this name.
  public func children(_ name: String) -> [XMLTree] { children.filter { $0.name == name } }

  /// The first child element with this name.
  public func child(_ name: String) -> XMLTree? { children.first { $0.name == name } }
}

/// Builds the tree as the parser reports elements (iteratively: a deep document needs no
/// deep recursion here).
private final class TreeBuilder: NSObject, XMLParserDelegate {
  private var stack: [XMLTree] = []
  private(set) var root: XMLTree?
  private weak var parser: XMLParser?

  init(_ parser: XMLParser) { self.parser = parser }

  func parser(
    _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
    attributes: [String: String] = [:]
  ) {
    stack.append(XMLTree(name: name, attributes: attributes, line: parser.lineNumber))
  }

  func parser(_ parser: XMLParser, foundCharacters string: String) {
    guard !stack.isEmpty else { return }
    stack[stack.count - 1].text += string
  }

  func parser(_ parser: XMLParser, foundCDATA data: Data) {
    guard !stack.isEmpty else { return }
    stack[stack.count - 1].text += String(decoding: data, as: UTF8.self)
  }

  func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
    guard let done = stack.popLast() else { return }
    if stack.isEmpty {
      root = done
    } else {
      stack[stack.count - 1].children.append(done)
    }
  }
}
