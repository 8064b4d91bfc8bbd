from localqa.cli import main

main()
