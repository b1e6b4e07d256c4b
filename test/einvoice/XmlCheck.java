import java.io.File;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.stream.StreamSource;
import javax.xml.validation.Schema;
import javax.xml.validation.SchemaFactory;

/**
 * The e-invoice tests' XML checker, run with `java XmlCheck.java <xsd or -> <file>...`: every file is
 * parsed (well-formed, namespace-aware, no external entities) and, when an XSD is given, validated
 * against it. Prints one line per file: "OK <file>" or "FAIL <file>: <first error>".
 */
public class XmlCheck {
  public static void main(String[] args) throws Exception {
    Schema schema = null;
    if (!args[0].equals("-")) {
      SchemaFactory sf = SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI);
      schema = sf.newSchema(new File(args[0]));
    }
    DocumentBuilderFactory dbf = DocumentBuilderFactory.newInstance();
    dbf.setNamespaceAware(true);
    dbf.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    for (int i = 1; i < args.length; i++) {
      String file = args[i];
      try {
        dbf.newDocumentBuilder().parse(new File(file));
        if (schema != null) schema.newValidator().validate(new StreamSource(new File(file)));
        System.out.println("OK " + file);
      } catch (Exception e) {
        System.out.println("FAIL " + file + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
      }
    }
  }
}
