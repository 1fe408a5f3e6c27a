from mendflow.cli import main

main()
