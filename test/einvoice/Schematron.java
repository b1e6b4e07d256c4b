import java.io.File;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import javax.xml.transform.stream.StreamSource;
import net.sf.saxon.s9api.Processor;
import net.sf.saxon.s9api.XsltCompiler;
import net.sf.saxon.s9api.XsltExecutable;

/**
 * The official schematron stylesheets over many documents in ONE Java process, run with
 * `java -cp Saxon-HE.jar Schematron.java <xslt> <input dir> <output dir> [<xslt> <in> <out>]...`.
 * Each stylesheet is compiled once, however many runs name it (the EN 16931 UBL one judges both
 * the ubl and the xrechnung documents), and every file of an input directory gets its SVRL report
 * under the same name in the output directory. One JVM and one compilation per stylesheet is what
 * keeps the official validation cheap enough for every test run (docs/e-invoices.md).
 * Prints "FAIL <file>: <message>" for a document the stylesheet could not process (its report is
 * then missing, which the caller counts as a failure).
 */
public class Schematron {
  public static void main(String[] args) throws Exception {
    Processor processor = new Processor(false);
    XsltCompiler compiler = processor.newXsltCompiler();
    Map<String, XsltExecutable> compiled = new HashMap<>();
    for (int i = 0; i + 2 < args.length; i += 3) {
      String xslt = args[i];
      XsltExecutable executable = compiled.get(xslt);
      if (executable == null) {
        executable = compiler.compile(new StreamSource(new File(xslt)));
        compiled.put(xslt, executable);
      }
      File output = new File(args[i + 2]);
      output.mkdirs();
      File[] inputs = new File(args[i + 1]).listFiles();
      Arrays.sort(inputs);
      for (File input : inputs) {
        try {
          executable.load30().transform(new StreamSource(input), processor.newSerializer(new File(output, input.getName())));
        } catch (Exception e) {
          System.out.println("FAIL " + input + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
        }
      }
    }
  }
}
